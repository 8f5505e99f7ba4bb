/**
 * Issue #34 on the fleet: after `logbook replicate`, the fleet's search tables (`facts`,
 * `turn_docs`) hold redacted text and `fleet search` prints no secret, while the `events` table
 * keeps every line byte for byte (it is the evidence); a hostile `origin_host` reaches
 * `fleet sessions` and `fleet show` as visible text, never as an escape sequence.
 */
import { assert, describe, it } from "@effect/vitest"
import { layerFleetClient } from "@logbook/fleet"
import { busyServerRetry, fleetTestTarget, resetFleetDatabase, tempDir } from "@logbook/testkit"
import { Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import * as Sql from "effect/sql/SqlClient"
import { logbook } from "../inProcess.ts"

const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }
const jsonl = (events: ReadonlyArray<unknown>) => events.map((e) => JSON.stringify(e)).join("\n") + "\n"

const SECRETS = ["pgpw0001", "sk_live_51Hfleetsecret0002", "curlpw0003"]
const TEXTS = [
  "PGPASSWORD=pgpw0001 psql",
  "deploy key sk_live_51Hfleetsecret0002",
  "curl -u admin:curlpw0003 https://x"
]

const OSC52 = "\u001b]52;c;aGk=\u0007"

// The embedded server admits one connection and notices a closed one a moment late.
const withDb = <A, E>(effect: Effect.Effect<A, E, SqlClient>) =>
  Effect.flatMap(fleetTestTarget, (target) =>
    Effect.provide(
      Effect.andThen(
        Effect.gen(function*() {
          const sql = yield* Sql.SqlClient
          yield* sql`select 1`
        }).pipe(Effect.retry(busyServerRetry), Effect.orDie),
        effect
      ),
      Layer.orDie(layerFleetClient(target, { maxConnections: 1 }))
    ))

const refusedByBusyServer = /Failed to connect|Connection closed during startup/u

const ok = (args: ReadonlyArray<string>, input?: string) =>
  logbook(args, input === undefined ? {} : { input }).pipe(
    Effect.flatMap((r) => r.exitCode === 1 && refusedByBusyServer.test(r.stderr) ? Effect.fail(r) : Effect.succeed(r)),
    Effect.retry(busyServerRetry),
    Effect.catch((r) => Effect.succeed(r)),
    Effect.map((r) => {
      assert.strictEqual(r.exitCode, 0, r.stderr)
      return r.stdout
    })
  )

describe("the fleet leaks no secret and no escape", () => {
  it.live(
    "search tables and fleet search are redacted, events stay exact, origin hosts are inert",
    () =>
      Effect.gen(function*() {
        const store = yield* tempDir("fleet-security")
        const url = Redacted.value((yield* fleetTestTarget).url)
        yield* ok(
          ["--sessions-dir", store, "append", "s"],
          jsonl([
            { type: "turn.started" },
            ...TEXTS.map((text, i) => ({
              type: "item.completed",
              item: { id: `m${i}`, type: "agent_message", text: `deploy note ${text}` }
            })),
            { type: "turn.completed", usage }
          ])
        )
        yield* ok(
          ["--sessions-dir", store, "memory", "write", "s"],
          JSON.stringify({
            summary: "s",
            task_summary: null,
            spec_summary: null,
            evaluation_summary: null,
            touched_files: [],
            grounded_facts: TEXTS.map((text) => ({ fact: `deploy fact ${text}`, source: "host" })),
            history_artifact_path: null,
            generated_at: "2026-01-01T00:00:00Z"
          })
        )
        yield* withDb(resetFleetDatabase)
        yield* ok(["--sessions-dir", store, "replicate", "--to", url])
        const stored = yield* withDb(Effect.gen(function*() {
          const sql = yield* Sql.SqlClient
          const facts = yield* sql<{ readonly text: string }>`select text from facts`
          const turns = yield* sql<{ readonly text: string }>`select text from turn_docs`
          const events = yield* sql<{ readonly line: Uint8Array }>`select line from events`
          yield* sql`update sessions set origin_host = ${`host${OSC52}`}`
          return {
            search: [...facts, ...turns].map((r) => r.text).join("\n"),
            events: events.map((r) => new TextDecoder().decode(r.line)).join("\n"),
            rows: facts.length + turns.length
          }
        }))
        assert.isAtLeast(stored.rows, 2)
        for (const secret of SECRETS) {
          assert.notInclude(stored.search, secret, "the fleet's search tables hold redacted text")
          assert.include(stored.events, secret, "the fleet's events table is the exact log")
        }
        assert.include(stored.search, "[REDACTED]")
        for (const scope of ["facts", "history", "all"]) {
          for (const json of [[], ["--json"]]) {
            const out = yield* ok(["fleet", "search", "deploy", "--scope", scope, "--db", url, "--now", "0", ...json])
            for (const secret of SECRETS) assert.notInclude(out, secret, `fleet search --scope ${scope} ${json}`)
          }
        }
        for (const args of [["sessions"], ["show", "s"]]) {
          const out = yield* ok(["fleet", ...args, "--db", url])
          assert.notMatch(out, /[\u0007\u001b]/u, `fleet ${args[0]} printed a raw escape`)
          assert.include(out, "host\\x1b]52;c;aGk=\\x07")
        }
      }),
    { timeout: 240_000 }
  )
})
