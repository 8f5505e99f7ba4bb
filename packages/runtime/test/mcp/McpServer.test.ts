/**
 * `logbook mcp` through the official MCP SDK client over stdio, on a store of real imported
 * sessions: it lists its tools and resource templates; every tool answers the question its CLI
 * counterpart answers with the same data (`--json`: same hits, order and scores); every citation
 * is accepted by `evidence`; results are cut at the budget with a cursor that continues them; bad
 * arguments are tool errors with a message, and the server answers the next call.
 */
import { assert, layer } from "@effect/vitest"
import { GoalCommand, newProgressLedger, setMilestones } from "@logbook/domain"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionMemory, storeLayerNode } from "../../src/SessionMemory.ts"
import { logbook } from "../cli/inProcess.ts"
import { callTool, cliJson, McpFixture } from "./harness.ts"

const NOW = 1_800_000_000

interface Citation {
  readonly session: string
  readonly offset: number
  readonly digest: string
}

interface Hit {
  readonly session: string
  readonly turn: number | null
  readonly chunk_id: string
  readonly score: number
  readonly snippet: string
  readonly citation: Citation | null
}

interface CliHit {
  readonly session: string
  readonly turn?: number
  readonly chunk_id: string
  readonly score: number
}

const hitsOf = (structured: Record<string, unknown>): ReadonlyArray<Hit> => structured["hits"] as ReadonlyArray<Hit>

/** Every page of a paged tool call, following cursors (at most 200 pages). */
const allPages = (name: string, args: Record<string, unknown>) =>
  Effect.gen(function*() {
    const pages: Array<Record<string, unknown>> = []
    let cursor: unknown = undefined
    do {
      const result = yield* callTool(name, cursor === undefined ? args : { ...args, cursor })
      assert.isFalse(result.isError, result.text)
      pages.push(result.structured)
      const maxTokens = args["max_tokens"]
      if (typeof maxTokens === "number") {
        assert.isAtMost(JSON.stringify(result.structured).length, maxTokens * 4, `${name} page ${pages.length}`)
      }
      cursor = result.structured["cursor"] ?? undefined
    } while (cursor !== undefined && pages.length < 200)
    return pages
  })

layer(McpFixture.layer, { timeout: 120_000 })("logbook mcp", (it) => {
  it.effect("lists its eight tools with input and output schemas, and the two resource templates", () =>
    Effect.gen(function*() {
      const { client } = yield* McpFixture
      const tools = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.tools.map((t) => t.name).sort(), [
        "evidence",
        "explain_session",
        "facts",
        "goal_progress",
        "list_sessions",
        "read_turn",
        "search",
        "show_session"
      ])
      for (const tool of tools.tools) {
        assert.strictEqual(tool.inputSchema.type, "object", tool.name)
        assert.isDefined(tool.outputSchema, tool.name)
        assert.isTrue(tool.annotations?.readOnlyHint, tool.name)
        assert.include(Object.keys(tool.inputSchema.properties ?? {}), "max_tokens", tool.name)
      }
      const templates = yield* Effect.promise(() => client.listResourceTemplates())
      assert.deepStrictEqual(templates.resourceTemplates.map((t) => t.uriTemplate).sort(), [
        "logbook://session/{id}",
        "logbook://session/{id}/turn/{n}"
      ])
    }))

  it.effect("search gives the hits, order and scores of `logbook search --json`, facts and history", () =>
    Effect.gen(function*() {
      for (
        const [scope, query] of [["facts", "repository error"], ["history", "test"], ["history", "repository"]] as const
      ) {
        const cli =
          (yield* cliJson(["search", query, "--scope", scope, "--limit", "10", "--now", String(NOW)])) as ReadonlyArray<
            CliHit
          >
        const result = yield* callTool("search", { query, scope, limit: 10, now: NOW, max_tokens: 32_000 })
        assert.isFalse(result.isError, result.text)
        const hits = hitsOf(result.structured)
        assert.deepStrictEqual(
          hits.map((h) => [h.session, h.chunk_id, h.score, h.turn]),
          cli.map((h) => [h.session, h.chunk_id, h.score, h.turn ?? null]),
          `${scope} ${query}`
        )
        if (scope === "history") assert.isAbove(hits.length, 0, query)
      }
    }))

  it.effect("search pages at a small budget continue with the cursor to the same hits in the same order", () =>
    Effect.gen(function*() {
      const args = { query: "test repository error file", scope: "history", limit: 10, now: NOW }
      const whole = hitsOf((yield* callTool("search", { ...args, max_tokens: 32_000 })).structured)
      const pages = yield* allPages("search", { ...args, max_tokens: 500 })
      assert.isAbove(pages.length, 1)
      assert.deepStrictEqual(pages.flatMap(hitsOf).map((h) => h.chunk_id), whole.map((h) => h.chunk_id))
      const filtered = hitsOf((yield* callTool("search", { ...args, session: whole[0]?.session })).structured)
      assert.isAbove(filtered.length, 0)
      assert.isTrue(filtered.every((h) => h.session === whole[0]?.session))
      const claude = hitsOf((yield* callTool("search", { ...args, agent: "claude" })).structured)
      assert.deepStrictEqual(
        claude.map((h) => h.chunk_id),
        whole.filter((h) => h.session.startsWith("claude-")).map((h) => h.chunk_id)
      )
      const codexSessions = (yield* callTool("list_sessions", { agent: "codex" }))
        .structured["sessions"] as ReadonlyArray<
          { agent: string }
        >
      assert.deepStrictEqual(codexSessions.map((s) => s.agent), ["codex", "codex"])
      const none = hitsOf((yield* callTool("search", { ...args, since: NOW })).structured)
      assert.deepStrictEqual(none, [], "nothing was recorded after the ranking time")
    }))

  it.effect("list_sessions, show_session, facts and goal_progress agree with sessions, show, facts and goal show", () =>
    Effect.gen(function*() {
      const cliSessions = (yield* cliJson(["sessions"])) as ReadonlyArray<{ session_id: string; turn_count: number }>
      const listed = (yield* callTool("list_sessions", {})).structured["sessions"] as ReadonlyArray<
        { session_id: string; turn_count: number; goal: string | null }
      >
      assert.deepStrictEqual(listed.map((s) => s.session_id), cliSessions.map((s) => s.session_id))
      assert.deepStrictEqual(listed.map((s) => s.turn_count), cliSessions.map((s) => s.turn_count))
      // Imported sessions track no goal: each is listed with what its memory view says it was about.
      const { dir } = yield* McpFixture
      let withObjective = 0
      for (const row of listed) {
        const view = JSON.parse(fs.readFileSync(path.join(dir, row.session_id, "derived", "memory.json"), "utf8"))
        const objective: string | null = view.objective ?? null
        if (objective === null) assert.isNull(row.goal, row.session_id)
        else {
          withObjective++
          assert.strictEqual(row.goal?.slice(0, 40), objective.slice(0, 40), row.session_id)
        }
      }
      assert.isAbove(withObjective, 2)
      let withTurnGoal = 0
      for (const { session_id } of cliSessions) {
        const show = (yield* cliJson(["show", session_id])) as {
          turn_index: { turns: ReadonlyArray<{ turn_number: number }> }
          manifest: { status: string }
        }
        const pages = yield* allPages("show_session", { session: session_id })
        const turns = pages.flatMap((p) =>
          p["turns"] as ReadonlyArray<{ turn: number; goal: string | null; line: string; citation: Citation | null }>
        )
        assert.deepStrictEqual(turns.map((t) => t.turn), show.turn_index.turns.map((t) => t.turn_number))
        assert.strictEqual(pages[0]?.["status"], show.manifest.status)
        const explained = (yield* cliJson(["explain", session_id, "--scope", "session"])) as {
          usage: unknown
          cost_usd: unknown
          goals: ReadonlyArray<{ label: string; evidence: { offset: number } }>
        }
        assert.deepStrictEqual([pages[0]?.["usage"], pages[0]?.["cost_usd"]], [explained.usage, explained.cost_usd])
        // Each turn names, on one line, the task `explain` read from its first line (`turn.started`).
        for (const t of turns) {
          const label = explained.goals.find((g) => g.evidence.offset === t.citation?.offset)?.label
          if (label === undefined) assert.isNull(t.goal, t.line)
          else {
            withTurnGoal++
            assert.strictEqual(t.goal?.slice(0, 60), label.replace(/\s+/gu, " ").trim().slice(0, 60), t.line)
            assert.isAtMost(t.goal?.length ?? 0, 240)
            assert.isTrue(t.line.endsWith(` — ${t.goal ?? ""}`), t.line)
          }
        }
        const goal = yield* callTool("goal_progress", { session: session_id })
        assert.isFalse(goal.isError, goal.text)
        assert.strictEqual(goal.structured["has_goal"], (yield* cliJson(["goal", "show", session_id])) !== null)
      }
      assert.isAbove(withTurnGoal, 5)
      const cliFacts = (yield* cliJson(["facts"])) as ReadonlyArray<{ session_id: string; fact: string }>
      const pages = yield* allPages("facts", { max_tokens: 500 })
      const facts = pages.flatMap((p) => p["facts"] as ReadonlyArray<{ session: string; fact: string }>)
      assert.isAbove(pages.length, 1)
      assert.deepStrictEqual(facts.map((f) => [f.session, f.fact]), cliFacts.map((f) => [f.session_id, f.fact]))
    }))

  it.effect("read_turn pages every event of a turn; explain_session in JSON is `logbook explain --json`", () =>
    Effect.gen(function*() {
      const session = "claude-198393f2-22db-477b-ac77-1825bea883ae"
      const { dir } = yield* McpFixture
      const cli = yield* logbook(["--sessions-dir", dir, "turn", session, "1"])
      const cliEvents = cli.stdout.split("\n").filter((l) => l.length > 0).map((l) =>
        JSON.parse(l) as { type: string; item?: { type: string } }
      )
      const pages = yield* allPages("read_turn", { session, turn: 1, max_tokens: 500 })
      const events = pages.flatMap((p) => p["events"] as ReadonlyArray<{ type: string; citation: Citation | null }>)
      assert.isAbove(pages.length, 1)
      assert.deepStrictEqual(
        events.map((e) => e.type),
        cliEvents.map((e) => (e.item === undefined ? e.type : `${e.type} ${e.item.type}`)),
        "the events of `logbook turn`, in order"
      )
      assert.isTrue(events.every((e) => e.citation !== null))
      const one = yield* allPages("read_turn", { session, turn: 1, max_tokens: 32_000 })
      assert.strictEqual(one.flatMap((p) => p["events"] as ReadonlyArray<unknown>).length, events.length)
      const explained = yield* allPages("explain_session", { session, format: "json", max_tokens: 500 })
      const json: unknown = JSON.parse(explained.map((p) => p["text"]).join(""))
      assert.deepStrictEqual(json, yield* cliJson(["explain", session]))
      const summary = yield* allPages("explain_session", { session, max_tokens: 500 })
      const cliSummary = yield* logbook(["--sessions-dir", dir, "explain", session])
      assert.strictEqual(summary.map((p) => p["text"]).join(""), cliSummary.stdout)
    }))

  it.effect("every citation of search, read_turn and facts is accepted by evidence, as `logbook evidence` shows it", () =>
    Effect.gen(function*() {
      const search = hitsOf((yield* callTool("search", { query: "test", scope: "history", now: NOW })).structured)
      const factHits = hitsOf((yield* callTool("search", { query: "repository error", now: NOW })).structured)
      assert.isAbove(factHits.length, 0)
      assert.isTrue(factHits.every((h) => h.citation !== null), "every derived fact hit names its line")
      const facts = (yield* callTool("facts", { limit: 5 })).structured["facts"] as ReadonlyArray<
        { citation: Citation | null }
      >
      const turn = (yield* callTool("read_turn", {
        session: "claude-198393f2-22db-477b-ac77-1825bea883ae",
        turn: 1,
        max_tokens: 1000
      })).structured["events"] as ReadonlyArray<{ citation: Citation | null }>
      const citations = [...search, ...factHits, ...facts, ...turn].flatMap((
        x
      ) => (x.citation === null ? [] : [x.citation]))
      assert.isAbove(citations.length, 5)
      assert.isTrue(facts.every((f) => f.citation !== null), "every derived fact names its line")
      for (const c of citations.slice(0, 12)) {
        const result = yield* callTool("evidence", { ...c, max_tokens: 32_000 })
        assert.isFalse(result.isError, result.text)
        const cli = (yield* cliJson(["evidence", c.session, String(c.offset), c.digest])) as { text: string }
        assert.strictEqual(result.structured["text"], cli.text)
      }
    }))

  it.effect("bad arguments are tool errors with a message that says what to change; the server keeps answering", () =>
    Effect.gen(function*() {
      const session = "claude-198393f2-22db-477b-ac77-1825bea883ae"
      const cases: ReadonlyArray<readonly [string, Record<string, unknown>, RegExp]> = [
        ["show_session", { session: "no-such-session" }, /no-such-session.*list_sessions names the sessions/u],
        ["show_session", { session: "../../etc" }, /invalid session id/u],
        ["read_turn", { session: "..", turn: 1 }, /invalid session id/u],
        ["read_turn", { session, turn: 99 }, /turn 99.*show_session lists/u],
        ["read_turn", { session, turn: -1 }, /turn must be an integer/u],
        ["search", { query: "test", limit: -3 }, /limit must be an integer from 1 to 100, got -3/u],
        ["search", { query: "test", limit: 1e12 }, /limit must be/u],
        ["list_sessions", { max_tokens: 10 }, /max_tokens must be/u],
        ["search", { query: "test", cursor: "not a cursor!" }, /invalid cursor/u],
        ["facts", { cursor: "eyJ0b29sIjoic2VhcmNoIiwia2V5IjoiW10iLCJhdCI6MX0" }, /continues search, not facts/u],
        ["evidence", { session, offset: 0, digest: "abc" }, /digest must be/u],
        ["evidence", { session, offset: 1, digest: "0".repeat(64) }, /unavailable/u]
      ]
      for (const [name, args, expected] of cases) {
        const result = yield* callTool(name, args)
        assert.isTrue(result.isError, `${name} ${JSON.stringify(args)}: ${result.text}`)
        assert.match(result.text, expected, `${name} ${JSON.stringify(args)}`)
      }
      const { dir } = yield* McpFixture
      const goalFile = path.join(dir, session, "derived", "goal.json")
      fs.mkdirSync(path.dirname(goalFile), { recursive: true })
      fs.writeFileSync(goalFile, "{ not json")
      const corrupt = yield* callTool("goal_progress", { session })
      fs.rmSync(goalFile)
      assert.isTrue(corrupt.isError, corrupt.text)
      assert.include(corrupt.text, "goal.json")
      const after = yield* callTool("list_sessions", { limit: 1 })
      assert.isFalse(after.isError, after.text)
    }))

  it.effect("the resource templates open a session and a turn", () =>
    Effect.gen(function*() {
      const { client } = yield* McpFixture
      const session = "claude-198393f2-22db-477b-ac77-1825bea883ae"
      const read = yield* Effect.promise(() => client.readResource({ uri: `logbook://session/${session}` }))
      const first = read.contents[0]
      assert.isTrue(first !== undefined && "text" in first && JSON.parse(first.text).session_id === session)
      const turn = yield* Effect.promise(() => client.readResource({ uri: `logbook://session/${session}/turn/1` }))
      const page = turn.contents[0]
      assert.isTrue(page !== undefined && "text" in page && JSON.parse(page.text).events.length > 0)
    }))

  it.effect("goal_progress returns a populated goal and ledger exactly as goal show and progress show store them", () =>
    Effect.gen(function*() {
      const { dir } = yield* McpFixture
      const session = "goal-mcp"
      yield* Effect.gen(function*() {
        const memory = yield* SessionMemory
        yield* memory.append({ type: "turn.started" })
        yield* memory.goals.createGoal({ goalId: "g-7", objective: "Ship the importer fix", tokenBudget: 40_000 })
        yield* memory.goals.run(GoalCommand.Pause({ reason: "user", message: "review first" }))
        yield* memory.goals.updateProgress((_, now) =>
          setMilestones(newProgressLedger(session, "Ship the importer fix", now), [
            { id: "m1", description: "reproduce", status: "done" },
            { id: "m2", description: "fix", status: "in_progress" }
          ], now)
        )
      }).pipe(
        Effect.provide(SessionMemory.layer({ workspace: dir, sessionsDir: dir, sessionId: session, retention: false })),
        Effect.provide(storeLayerNode)
      )
      const pages = yield* allPages("goal_progress", { session, max_tokens: 500 })
      assert.strictEqual(pages[0]?.["has_goal"], true)
      assert.strictEqual(pages[0]?.["has_progress"], true)
      const text = pages.map((p) => p["text"] as string).join("")
      const stored = JSON.parse(text) as { goal: unknown; progress: unknown }
      assert.deepStrictEqual(stored.goal, yield* cliJson(["goal", "show", session]))
      assert.deepStrictEqual(stored.progress, yield* cliJson(["progress", "show", session]))
      assert.include(text, "review first")
    }))
})
