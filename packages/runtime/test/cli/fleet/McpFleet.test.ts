/**
 * `logbook mcp --db`: the MCP server over a fleet, through the official SDK client over stdio,
 * against the same server over the store that was replicated. A store of real imported sessions
 * (plus one with a goal and a progress ledger) is replicated into the emptied test fleet; then
 * every tool is called with the same arguments on both servers and must give the same result
 * (hits, scores, turns, citations, explanations, facts), citations taken from one are accepted
 * by the other's `evidence`, and bad arguments are tool errors on both.
 */
import { assert, describe, it } from "@effect/vitest"
import { GoalCommand, newProgressLedger, setMilestones } from "@logbook/domain"
import { fleetTestTarget, resetFleetDatabase, tempDir } from "@logbook/testkit"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionMemory, storeLayerNode } from "../../../src/SessionMemory.ts"
import { importRealSessions, LOGBOOK_JS } from "../../mcp/harness.ts"
import { assertBuilt } from "../harness.ts"
import { logbook } from "../inProcess.ts"
import { runFleetCli, withDb } from "./support/fleetCli.ts"

const NOW = 1_800_000_000

const run = runFleetCli

const childEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== "LOGBOOK_SESSIONS_DIR" && k !== "LOGBOOK_DATABASE_URL") env[k] = v
  }
  return env
}

/** An SDK client connected to `logbook <args>`, closed with the scope. */
const connect = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "logbook-fleet-contract-test", version: "1.0.0" })
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [LOGBOOK_JS, ...args],
          env: childEnv(),
          stderr: "pipe"
        })
      )
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

interface Outcome {
  readonly isError: boolean
  readonly text: string
  readonly structured: unknown
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(async (): Promise<Outcome> => {
    const result = await client.callTool({ name, arguments: args })
    const content = Array.isArray(result.content) ? result.content : []
    const first: unknown = content[0]
    const text = typeof first === "object" && first !== null && "text" in first && typeof first.text === "string"
      ? first.text
      : ""
    return { isError: result.isError === true, text, structured: result.structuredContent }
  })

/** A store of the real imported sessions and one with a goal, replicated into the emptied fleet; both servers. */
const setUp = Effect.gen(function*() {
  assertBuilt()
  const base = yield* tempDir("mcp-fleet")
  const store = path.join(base, "store")
  yield* importRealSessions(store)
  yield* Effect.gen(function*() {
    const memory = yield* SessionMemory
    yield* memory.append({ type: "turn.started" })
    yield* memory.goals.createGoal({ goalId: "g-1", objective: "Replicate the importer fix", tokenBudget: 9_000 })
    yield* memory.goals.updateProgress((_, now) =>
      setMilestones(newProgressLedger("goal-fleet", "Replicate the importer fix", now), [
        { id: "m1", description: "replicate", status: "done" }
      ], now)
    )
    yield* memory.goals.run(GoalCommand.Pause({ reason: "user", message: "check the fleet" }))
  }).pipe(
    Effect.provide(
      SessionMemory.layer({ workspace: store, sessionsDir: store, sessionId: "goal-fleet", retention: false })
    ),
    Effect.provide(storeLayerNode)
  )
  const sessions = fs.readdirSync(store).filter((n) => !n.startsWith(".")).sort()
  yield* withDb(resetFleetDatabase)
  const url = Redacted.value((yield* fleetTestTarget).url)
  const replicated = yield* run(["--sessions-dir", store, "replicate", "--to", url])
  assert.strictEqual(replicated.exitCode, 0, replicated.stderr)
  const local = yield* connect(["--sessions-dir", store, "mcp"])
  const fleet = yield* connect(["mcp", "--db", url])
  /** The same call on both servers: the fleet's outcome, after checking it equals the store's. */
  const same = (name: string, args: Record<string, unknown>) =>
    Effect.gen(function*() {
      const mine = yield* call(local, name, args)
      const theirs = yield* call(fleet, name, args)
      assert.deepStrictEqual(theirs, mine, `${name} ${JSON.stringify(args)}`)
      return theirs
    })
  return { store, sessions, local, fleet, same }
})

const record = (u: unknown): Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u) ? u as Record<string, unknown> : {}

const list = (u: unknown): ReadonlyArray<unknown> => Array.isArray(u) ? u : []

describe("logbook mcp --db", () => {
  it.live("answers every tool over a fleet exactly as over the store it was replicated from", () =>
    Effect.scoped(Effect.gen(function*() {
      const { fleet, local, same, sessions } = yield* setUp
      const listed = yield* same("list_sessions", {})
      assert.strictEqual(list(record(listed.structured)["sessions"]).length, sessions.length)
      let historyHits = 0
      for (const query of ["test", "file error", "readme", "zzyzx"]) {
        for (const scope of ["facts", "history"]) {
          const found = yield* same("search", { query, scope, now: NOW, limit: 8 })
          if (scope === "history") historyHits += list(record(found.structured)["hits"]).length
        }
      }
      assert.isAbove(historyHits, 0)
      yield* same("facts", { limit: 50 })
      let cited = 0
      for (const session of sessions) {
        const shown = yield* same("show_session", { session })
        yield* same("explain_session", { session })
        yield* same("explain_session", { session, format: "json", scope: "session" })
        yield* same("goal_progress", { session })
        yield* same("facts", { session })
        for (const turn of list(record(shown.structured)["turns"]).slice(0, 2)) {
          // A small budget, so a turn takes several pages: every page must agree.
          let cursor: unknown = undefined
          do {
            const page = yield* same("read_turn", {
              session,
              turn: record(turn)["turn"],
              max_tokens: 500,
              ...(cursor === undefined ? {} : { cursor })
            })
            for (const event of list(record(page.structured)["events"])) {
              const citation = record(record(event)["citation"])
              if (citation["digest"] === undefined) continue
              // A citation of one is evidence on the other.
              const there = yield* call(fleet, "evidence", citation)
              const here = yield* call(local, "evidence", citation)
              assert.isFalse(there.isError, there.text)
              assert.deepStrictEqual(there, here)
              cited++
            }
            cursor = record(page.structured)["cursor"] ?? undefined
          } while (cursor !== undefined && cursor !== null)
        }
      }
      assert.isAbove(cited, 10)
      const goal = yield* same("goal_progress", { session: "goal-fleet" })
      assert.strictEqual(record(goal.structured)["has_goal"], true)
      assert.include(goal.text, "check the fleet")
    })))

  it.live("reports bad arguments as tool errors and keeps answering", () =>
    Effect.scoped(Effect.gen(function*() {
      const { fleet, sessions } = yield* setUp
      const session = sessions[0] ?? ""
      for (
        const [name, args, says] of [
          ["show_session", { session: "no-such-session" }, "no-such-session"],
          ["read_turn", { session: "../etc", turn: 1 }, "invalid session id"],
          ["read_turn", { session, turn: 999_999 }, "999999"],
          ["evidence", { session, offset: 1, digest: "0".repeat(64) }, "no retained line starts there"],
          ["evidence", { session, offset: 0, digest: "0".repeat(64) }, "the digest differs"],
          ["search", { query: "test", limit: -3 }, "limit"],
          ["list_sessions", { cursor: "not-a-cursor" }, "cursor"]
        ] as const
      ) {
        const outcome = yield* call(fleet, name, args)
        assert.isTrue(outcome.isError, `${name} ${JSON.stringify(args)}: ${outcome.text}`)
        assert.include(outcome.text, says)
      }
      const still = yield* call(fleet, "list_sessions", {})
      assert.isFalse(still.isError)
    })))

  it.live("refuses to start without a connection string, naming what to give", () =>
    Effect.gen(function*() {
      const r = yield* logbook(["mcp", "--fleet"], { env: { LOGBOOK_DATABASE_URL: "" } })
      assert.notStrictEqual(r.exitCode, 0)
      assert.match(r.stderr, /LOGBOOK_DATABASE_URL|--db/u)
    }))
})
