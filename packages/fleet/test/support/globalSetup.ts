/**
 * Vitest global setup of the `fleet` project: gives every fleet test a PostgreSQL server through
 * `LOGBOOK_TEST_DATABASE_URL`. When the variable is already set (the real-server lane of
 * `.ci/run`, or a developer's own server) it is used as it is; otherwise an embedded PostgreSQL
 * (PGlite) is started once per run and served on a free 127.0.0.1 port through its socket
 * server. Child processes spawned by tests inherit the variable.
 *
 * **Gotchas:** PGlite is one database session. The socket server multiplexes its connections onto
 * it through a queue that, while one connection is inside a transaction, runs only that
 * connection's statements: connections are serialised, never interleaved inside a transaction.
 * It admits several at once so that a connection whose close the server has not yet noticed (a
 * child process just killed, a pool just shut) never locks the next test out; that lock-out,
 * with one connection admitted, once outlasted a test's 30 s of retries on a loaded CI machine.
 * The fleet project still runs its files one after another (each starts from an empty, freshly
 * migrated database), and tests that need two transactions open at once skip unless a real
 * server is configured.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"

const ENV = "LOGBOOK_TEST_DATABASE_URL"

/** Connections the embedded server admits at once (see the Gotchas above). */
const EMBEDDED_CONNECTIONS = 16

export default async function setup(): Promise<undefined | (() => Promise<void>)> {
  if ((process.env[ENV] ?? "") !== "") return undefined
  const db = await PGlite.create()
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: EMBEDDED_CONNECTIONS })
  await server.start()
  process.env[ENV] = `postgres://postgres@${server.getServerConn()}/postgres`
  process.env["LOGBOOK_TEST_DATABASE_KIND"] = "pglite"
  return async () => {
    await server.stop()
    await db.close()
  }
}
