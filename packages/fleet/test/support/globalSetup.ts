/**
 * Vitest global setup of the `fleet` project: gives every fleet test a PostgreSQL server through
 * `LOGBOOK_TEST_DATABASE_URL`. When the variable is already set (the real-server lane of
 * `.ci/run`, or a developer's own server) it is used as it is; otherwise an embedded PostgreSQL
 * (PGlite) is started once per run and served on a free 127.0.0.1 port through its socket
 * server. Child processes spawned by tests inherit the variable.
 *
 * **Gotchas:** PGlite is one database session behind one connection: two clients at once would
 * share a transaction, so the socket server admits one connection at a time and the fleet project
 * runs its files one after another. Tests that need two live connections at once skip unless a
 * real server is configured.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"

const ENV = "LOGBOOK_TEST_DATABASE_URL"

export default async function setup(): Promise<undefined | (() => Promise<void>)> {
  if ((process.env[ENV] ?? "") !== "") return undefined
  const db = await PGlite.create()
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
  await server.start()
  process.env[ENV] = `postgres://postgres@${server.getServerConn()}/postgres`
  process.env["LOGBOOK_TEST_DATABASE_KIND"] = "pglite"
  return async () => {
    await server.stop()
    await db.close()
  }
}
