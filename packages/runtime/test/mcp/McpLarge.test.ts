/**
 * `logbook mcp` on awkward sessions, through the official SDK client: a 50 MB session (one turn
 * of 800 commands with 64 KiB of output each, a secret among them) answers `read_turn` and
 * `search` within the budget with a cursor to continue, redacted; a session whose last line is
 * being written answers every reader, and the next call sees the line once it is complete.
 */
import { assert, describe, it } from "@effect/vitest"
import { plantSession, tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { connect } from "./harness.ts"

const SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"

const bigTurn = (commands: number, outputBytes: number): string => {
  const chunk = "compiling module retry logic websocket handler ok\n"
  const output = chunk.repeat(Math.ceil(outputBytes / chunk.length)).slice(0, outputBytes)
  const lines = [JSON.stringify({ type: "turn.started" })]
  for (let i = 0; i < commands; i++) {
    lines.push(JSON.stringify({
      type: "item.completed",
      item: {
        id: `c${i}`,
        type: "command_execution",
        command: `npm run build -- --step ${i}`,
        aggregated_output: i === 7 ? `OPENAI token ${SECRET}\n${output}` : output,
        exit_code: i % 50 === 0 ? 1 : 0,
        status: i % 50 === 0 ? "failed" : "completed"
      }
    }))
  }
  lines.push(
    JSON.stringify({ type: "turn.completed", usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 } })
  )
  return lines.map((event) => `{"schema_version":"0.18.0","event":${event}}\n`).join("")
}

describe("logbook mcp on large and growing sessions", () => {
  it.live(
    "read_turn and search on a 50 MB session answer within the budget, with a cursor, redacted",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("mcp-large")
        plantSession(dir, "big", { events: bigTurn(800, 64 * 1024) })
        assert.isAbove(fs.statSync(path.join(dir, "big", "events.jsonl")).size, 50 * 1000 * 1000)
        const client = yield* connect(dir)
        const call = (name: string, args: Record<string, unknown>) =>
          Effect.promise(() => client.callTool({ name, arguments: args }))
        const maxTokens = 1000
        const first = yield* call("read_turn", { session: "big", turn: 1, max_tokens: maxTokens })
        assert.notStrictEqual(first.isError, true, JSON.stringify(first.content))
        const page = first.structuredContent as { events: ReadonlyArray<{ text: string }>; cursor: string | null }
        assert.isAtMost(JSON.stringify(page).length, maxTokens * 4)
        assert.isString(page.cursor)
        // A cursor continues the same question at another budget.
        const second = yield* call("read_turn", { session: "big", turn: 1, max_tokens: 32_000, cursor: page.cursor })
        assert.notStrictEqual(second.isError, true, JSON.stringify(second.content))
        const next = second.structuredContent as { events: ReadonlyArray<{ text: string }>; cursor: string | null }
        assert.isAtMost(JSON.stringify(next).length, 32_000 * 4)
        assert.isString(next.cursor)
        assert.isTrue(next.events.every((e) => !e.text.includes(SECRET)))
        assert.isTrue(next.events.some((e) => e.text.includes("[REDACTED]")))
        const hits = yield* call("search", { query: "websocket retry", scope: "history", max_tokens: 500 })
        assert.notStrictEqual(hits.isError, true, JSON.stringify(hits.content))
        assert.isAtMost(JSON.stringify(hits.structuredContent).length, 500 * 4)
        assert.notInclude(JSON.stringify(hits.structuredContent), SECRET)
      }).pipe(Effect.scoped),
    { timeout: 180_000 }
  )

  it.live(
    "a session being written while it is read answers every reader; the completed line shows next",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("mcp-growing")
        // An open turn (no turn.completed yet), its next line half written.
        const open = bigTurn(3, 100).split("\n").slice(0, -2).join("\n") + "\n"
        plantSession(dir, "live", { events: open, manifest: { status: "active", in_turn: true, turn_count: 0 } })
        const file = path.join(dir, "live", "events.jsonl")
        const line = `{"schema_version":"0.18.0","event":${
          JSON.stringify({ type: "item.completed", item: { id: "m", type: "agent_message", text: "halfway done" } })
        }}\n`
        fs.appendFileSync(file, line.slice(0, 40))
        const client = yield* connect(dir)
        const call = (name: string, args: Record<string, unknown>) =>
          Effect.promise(() => client.callTool({ name, arguments: args }))
        for (
          const [name, args] of [
            ["show_session", { session: "live" }],
            ["read_turn", { session: "live", turn: 1 }],
            ["search", { query: "build", scope: "history" }],
            ["explain_session", { session: "live" }],
            ["list_sessions", {}]
          ] as const
        ) {
          const result = yield* call(name, args)
          assert.notStrictEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`)
        }
        fs.appendFileSync(file, line.slice(40))
        const after = yield* call("read_turn", { session: "live", turn: 1 })
        assert.include(JSON.stringify(after.structuredContent), "halfway done")
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
