/**
 * `logbook fleet search` in-process against the test fleet: the same JSON records and the same
 * text lines as the local `logbook search` over the same sessions, `--scope`/`--in` and
 * `--limit`/`--max`, the connection string from `--db` or `LOGBOOK_DATABASE_URL` and never
 * printed, and the messages for no hits and no database.
 */
import { assert, describe, it } from "@effect/vitest"
import { layerFleetClient, syncSearchDocuments } from "@logbook/fleet"
import { busyServerRetry, fleetTestTarget, plantView, resetFleetDatabase, sessionsRoot } from "@logbook/testkit"
import { Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import * as Sql from "effect/sql/SqlClient"
import * as fs from "node:fs"
import { storeLayerNode } from "../../../src/SessionMemory.ts"
import { logbook } from "../inProcess.ts"

const NOW = 1_800_000_000
const DAY = 86_400

/** Runs `effect` with its own connection to the test database, closed when it ends (the CLI needs the only one). */
const withDb = <A, E>(effect: Effect.Effect<A, E, SqlClient>) =>
  Effect.flatMap(
    fleetTestTarget,
    (target) =>
      Effect.provide(
        Effect.andThen(connected, effect),
        Layer.orDie(layerFleetClient(target, { maxConnections: 1 }))
      )
  )

// The embedded server admits one connection and notices a closed one a moment late: the first
// query is retried until the server lets this client in.
const connected = Effect.gen(function*() {
  const sql = yield* Sql.SqlClient
  yield* sql`select 1`
}).pipe(Effect.retry(busyServerRetry), Effect.orDie)

// The embedded server refuses a connection while it still holds the previous client's one.
const refusedByBusyServer = /Failed to connect|Connection closed during startup/u

/** `logbook <args>`, retried while the embedded test server is still releasing the last connection. */
const cli = (args: ReadonlyArray<string>, env?: Record<string, string>) =>
  logbook(args, env === undefined ? {} : { env }).pipe(
    Effect.flatMap((r) => r.exitCode === 1 && refusedByBusyServer.test(r.stderr) ? Effect.fail(r) : Effect.succeed(r)),
    Effect.retry(busyServerRetry),
    Effect.catch((r) => Effect.succeed(r))
  )

/** Three sessions with views, one with a log, synced into the (emptied) test fleet. */
const fleetWithSessions = Effect.gen(function*() {
  const { root } = yield* sessionsRoot("fleet-cli")
  plantView(root, "alpha", ["fix the flaky websocket test", "npm test failed: ECONNREFUSED"], NOW - 2 * DAY)
  plantView(root, "beta", ["the websocket server restarts on port 8080", "update the readme"], NOW - 50 * DAY)
  plantView(root, "gamma", ["websocket websocket reconnect loop"], NOW)
  const out = yield* logbook(["--sessions-dir", root, "demo"])
  assert.strictEqual(out.exitCode, 0, out.stderr)
  yield* withDb(Effect.gen(function*() {
    yield* resetFleetDatabase
    for (const name of fs.readdirSync(root).filter((n) => !n.startsWith("."))) {
      yield* syncSearchDocuments(root, name).pipe(Effect.provide(storeLayerNode))
    }
  }))
  const url = Redacted.value((yield* fleetTestTarget).url)
  return { root, url }
})

const ok = (args: ReadonlyArray<string>, env?: Record<string, string>) =>
  Effect.map(cli(args, env), (r) => {
    assert.strictEqual(r.exitCode, 0, r.stderr)
    return r.stdout
  })

describe("logbook fleet search", () => {
  it.live("prints the same JSON and text as the local search over the same sessions", () =>
    Effect.gen(function*() {
      const { root, url } = yield* fleetWithSessions
      const now = String(NOW)
      for (const query of ["websocket", "test readme", "demo", "zzyzx"]) {
        for (const [fleetScope, localScope] of [["facts", "facts"], ["history", "history"]] as const) {
          const local = yield* ok([
            "--sessions-dir",
            root,
            "search",
            query,
            "--in",
            localScope,
            "--now",
            now,
            "--json"
          ])
          const fleet = yield* ok([
            "fleet",
            "search",
            query,
            "--scope",
            fleetScope,
            "--db",
            url,
            "--now",
            now,
            "--json"
          ])
          assert.deepStrictEqual(JSON.parse(fleet), JSON.parse(local), `${fleetScope} ${query}`)
        }
      }
      const local = yield* ok(["--sessions-dir", root, "search", "websocket", "--max", "2", "--now", now])
      const fleet = yield* ok(["fleet", "search", "websocket", "--limit", "2", "--db", url, "--now", now])
      assert.strictEqual(fleet, local)
      assert.strictEqual(fleet.trim().split("\n").length, 2)
      const aliases = yield* ok([
        "fleet",
        "search",
        "websocket",
        "--in",
        "facts",
        "--max",
        "2",
        "--db",
        url,
        "--now",
        now
      ])
      assert.strictEqual(aliases, fleet)
    }), { timeout: 120_000 })

  it.live(
    "--scope all merges facts and turns by score; the URL may come from LOGBOOK_DATABASE_URL",
    () =>
      Effect.gen(function*() {
        const { url } = yield* fleetWithSessions
        const now = String(NOW)
        const facts = JSON.parse(
          yield* ok(["fleet", "search", "websocket", "--now", now, "--json"], { LOGBOOK_DATABASE_URL: url })
        )
        const history = JSON.parse(
          yield* ok(["fleet", "search", "websocket", "--scope", "history", "--db", url, "--now", now, "--json"])
        )
        const all = JSON.parse(
          yield* ok([
            "fleet",
            "search",
            "websocket",
            "--scope",
            "all",
            "--limit",
            "20",
            "--db",
            url,
            "--now",
            now,
            "--json"
          ])
        )
        const byScore = (a: { score: number; chunk_id: string }, b: { score: number; chunk_id: string }) =>
          b.score - a.score || (a.chunk_id < b.chunk_id ? -1 : 1)
        assert.deepStrictEqual(all, [...facts, ...history].sort(byScore).slice(0, 20))
        assert.isAtLeast(facts.length, 3)
      }),
    { timeout: 120_000 }
  )

  it.live(
    "no hits and no words are said plainly; a missing or unreachable database fails without the URL",
    () =>
      Effect.gen(function*() {
        const { url } = yield* fleetWithSessions
        const none = yield* ok(["fleet", "search", "zzyzx", "--db", url])
        assert.match(none, /^No facts in the fleet .* match "zzyzx"\.\n$/u)
        assert.strictEqual(yield* ok(["fleet", "search", "?!", "--db", url]), "No words to search for in the query.\n")
        const missing = yield* cli(["fleet", "search", "websocket"])
        assert.strictEqual(missing.exitCode, 2)
        assert.match(missing.stderr, /no fleet database given; pass .*--db/u)
        const secret = "postgres://agent:hunter2secret@127.0.0.1:1/fleet"
        const refused = yield* logbook(["fleet", "search", "websocket", "--db", secret])
        assert.strictEqual(refused.exitCode, 1)
        assert.match(refused.stderr, /fleet database 127\.0\.0\.1:1\/fleet: search failed/u)
        assert.notInclude(refused.stderr + refused.stdout, "hunter2secret")
        const bad = yield* cli(["fleet", "search", "websocket", "--db", "mysql://x@y/z"])
        assert.strictEqual(bad.exitCode, 2)
      }),
    { timeout: 120_000 }
  )
})
