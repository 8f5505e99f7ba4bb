/**
 * `logbook replicate` in-process against the test fleet: a pass replicates every session and says
 * so without ever printing the connection string; `--json` gives the per-session result; no URL is
 * a usage error; a conflicting line exits 5 with the conflict on stderr.
 */
import { assert, describe, it } from "@effect/vitest"
import { layerFleetClient } from "@logbook/fleet"
import {
  busyServerRetry,
  fleetTestTarget,
  nodeLayer,
  openLog,
  resetFleetDatabase,
  sessionsRoot,
  turn
} from "@logbook/testkit"
import { Effect, Redacted } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import { assertBuilt, eventually, runInBackground } from "../harness.ts"
import { logbook } from "../inProcess.ts"

/** Runs `effect` on a client that is closed afterwards (the embedded server admits one connection at a time). */
const withFleet = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.flatMap(
    fleetTestTarget,
    (target) =>
      effect.pipe(
        Effect.provide(layerFleetClient(target, { maxConnections: 1 })),
        // The embedded server refuses a connection until it has seen the previous one close.
        Effect.retry(busyServerRetry),
        Effect.orDie
      )
  )

/**
 * Runs `logbook <args>` against the embedded server, which refuses a connection until it has seen
 * the previous one (a test's own, just closed) go: a run whose only failure was that refused
 * connection is run again, under the same retry policy as the tests' own connections.
 */
const whenServerFree = (args: ReadonlyArray<string>, options?: Parameters<typeof logbook>[1]) =>
  logbook(args, options).pipe(
    Effect.flatMap((r) =>
      r.exitCode === 1 && /fleet database [^\n]*connect/iu.test(r.stderr) ? Effect.fail(r) : Effect.succeed(r)
    ),
    Effect.retry(busyServerRetry),
    Effect.catch((r) => Effect.succeed(r))
  )

/** The test database URL with a password added, to check that it is never printed. */
const urlWithPassword = Effect.map(fleetTestTarget, (target) => {
  const url = new URL(Redacted.value(target.url))
  url.password = "s3cret-pw"
  return url.toString()
})

const seed = (root: string, id: string, turns: number) =>
  Effect.scoped(Effect.gen(function*() {
    const log = yield* openLog(root, id)
    for (let i = 0; i < turns; i++) {
      for (const e of turn(`text ${i}`)) yield* log.append(e)
    }
    yield* log.flush
  })).pipe(Effect.provide(nodeLayer()), Effect.orDie)

describe("logbook replicate", () => {
  it.live("replicates every session once and never prints the connection string", () =>
    Effect.gen(function*() {
      yield* withFleet(resetFleetDatabase)
      const { root } = yield* sessionsRoot("cli-replicate")
      yield* seed(root, "alpha", 2)
      yield* seed(root, "beta", 3)
      const url = yield* urlWithPassword
      const first = yield* whenServerFree(["--sessions-dir", root, "replicate"], { env: { LOGBOOK_DATABASE_URL: url } })
      assert.strictEqual(first.exitCode, 0, first.stderr)
      assert.match(first.stdout, /Replicated 15 line\(s\) .* of 2 session\(s\)/)
      for (const text of [first.stdout, first.stderr]) {
        assert.notInclude(text, "s3cret-pw")
        assert.notInclude(text, url)
      }
      const again = yield* whenServerFree(["--sessions-dir", root, "replicate", "--to", url, "--json"])
      assert.strictEqual(again.exitCode, 0, again.stderr)
      const report = JSON.parse(again.stdout) as {
        inserted: number
        sessions: Array<{ session_id: string; offset: number; conflict: unknown }>
      }
      assert.strictEqual(report.inserted, 0)
      assert.deepStrictEqual(report.sessions.map((s) => s.session_id).sort(), ["alpha", "beta"])
      const count = yield* withFleet(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly n: bigint | number }>`select count(*) as n from events`
      }))
      assert.strictEqual(Number(count[0]?.n), 15)
    }), { timeout: 120_000 })

  it.live("without --to or LOGBOOK_DATABASE_URL it is a usage error", () =>
    Effect.gen(function*() {
      const { root } = yield* sessionsRoot("cli-replicate-nourl")
      const r = yield* logbook(["--sessions-dir", root, "replicate"])
      assert.strictEqual(r.exitCode, 2)
      assert.include(r.stderr, "LOGBOOK_DATABASE_URL")
    }))

  it.live("a bad percent-encoding in the URL's password is a usage error for every fleet command", () =>
    Effect.gen(function*() {
      const { root } = yield* sessionsRoot("cli-replicate-badurl")
      const url = "postgres://u:pa%zzss@127.0.0.1:1/fleet"
      for (
        const args of [
          ["replicate", "--to", url],
          ["fleet", "sessions", "--db", url],
          ["fleet", "show", "s", "--db", url],
          ["fleet", "search", "x", "--db", url],
          ["fleet", "pack", "verify", "s", "--db", url],
          ["fleet", "restore", "s", "--db", url]
        ]
      ) {
        const r = yield* logbook(["--sessions-dir", root, ...args])
        assert.strictEqual(r.exitCode, 2, `${args.join(" ")}: ${r.stderr}`)
        assert.include(r.stderr, "the password is not valid percent-encoding", args.join(" "))
        assert.notInclude(r.stderr, "URIError")
        assert.notInclude(r.stderr, "pa%zzss")
      }
    }))

  it.live("a conflicting line exits 5 and is reported on stderr", () =>
    Effect.gen(function*() {
      yield* withFleet(resetFleetDatabase)
      const { root } = yield* sessionsRoot("cli-replicate-conflict")
      yield* seed(root, "gamma", 2)
      const url = yield* urlWithPassword
      const first = yield* whenServerFree(["--sessions-dir", root, "replicate", "--to", url])
      assert.strictEqual(first.exitCode, 0, first.stderr)
      yield* withFleet(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`delete from replication_cursors where session_id = 'gamma'`
      }))
      const events = `${root}/gamma/events.jsonl`
      const bytes = fs.readFileSync(events)
      bytes.write("TEXT", bytes.indexOf("text 1"))
      fs.writeFileSync(events, bytes)
      const r = yield* whenServerFree(["--sessions-dir", root, "replicate", "--to", url])
      assert.strictEqual(r.exitCode, 5, r.stderr)
      assert.include(r.stderr, "replication conflict in session gamma")
      assert.notInclude(r.stderr, "s3cret-pw")
    }), { timeout: 120_000 })

  it.live("--watch keeps replicating new lines until interrupted", () =>
    Effect.gen(function*() {
      assertBuilt()
      yield* withFleet(resetFleetDatabase)
      const { base, root } = yield* sessionsRoot("cli-replicate-watch")
      yield* seed(root, "delta", 2)
      const url = yield* urlWithPassword
      const watch = yield* runInBackground(["--sessions-dir", root, "replicate", "--watch"], {
        cwd: base,
        env: { LOGBOOK_DATABASE_URL: url }
      })
      // The lines the watcher reports as replicated so far. The seeding below commits turn by
      // turn, so one pass may take only part of it: wait for the total, not for a second report.
      const replicated = () =>
        [...watch.stderr().matchAll(/(\d+) new line\(s\)/g)].reduce((n, m) => n + Number(m[1]), 0)
      const onDisk = () => fs.readFileSync(`${root}/delta/events.jsonl`, "utf8").split("\n").length - 1
      // Node's start and the migrations come first: up to 90 s on a loaded machine.
      yield* eventually("the first pass", () => replicated() >= 6, 4500)
      yield* seed(root, "delta", 3)
      assert.strictEqual(onDisk(), 15)
      yield* eventually("all 15 lines", () => replicated() >= 15, 4500)
      const stopped = yield* watch.stop("SIGINT")
      assert.notInclude(stopped.stderr, "s3cret-pw")
      const count = yield* withFleet(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly n: bigint | number }>`select count(*) as n from events where session_id = 'delta'`
      }))
      assert.strictEqual(Number(count[0]?.n), 15)
    }), { timeout: 240_000 })
})
