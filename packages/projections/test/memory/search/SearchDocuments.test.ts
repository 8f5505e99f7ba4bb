/**
 * The history documents the search build makes in one read of a log (the fast decoder, quiet
 * lines left undecoded) are exactly those of the decoded event stream (`sessionHistoryDocuments`),
 * for logs of arbitrary lines — undecodable text lines, undecodable quiet lines opening a turn,
 * blank and broken lines, events outside every turn — rescanned, and for a log the store wrote
 * (its turn index trusted, no rescan).
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine, snippetAround } from "@logbook/domain"
import { childPath } from "@logbook/store"
import { appendAll, nodeLayer, openLog, plantSession, sessionsRoot } from "@logbook/testkit"
import { Effect, Schema, Stream } from "effect"
import {
  sessionHistoryDocuments,
  sessionSearchDocuments,
  sourcePath,
  storedSnippet
} from "../../../src/memory/search/SearchDocuments.ts"

const context = { task_id: "t", turn_id: "u", actor_id: "a", timestamp: "2026-01-02T03:04:05Z" }
const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }

const EVENTS: ReadonlyArray<ThreadEvent> = [
  { type: "turn.started", context: { ...context, origin: "user", goal: "fix the login test" } },
  { type: "turn.started" },
  { type: "turn.completed", usage },
  { type: "turn.failed", message: "model gave up" },
  {
    type: "turn.blocked",
    message: "tool fuse tripped",
    blocked_streak: 0,
    blocked_total: 0,
    consecutive_cap: 0,
    total_cap: 0,
    recovery_active: false
  },
  { type: "item.completed", item: { id: "m", type: "agent_message", text: "the websocket test is flaky" } },
  { type: "item.completed", item: { context, id: "p", type: "plan", text: "1. rerun npm test" } },
  {
    type: "item.completed",
    item: {
      id: "c",
      type: "command_execution",
      command: "npm test",
      aggregated_output: "ECONNREFUSED",
      exit_code: 1,
      status: "failed"
    }
  },
  {
    type: "item.completed",
    item: { id: "f", type: "file_change", changes: [{ path: "src/login.ts", kind: "update" }], status: "completed" }
  },
  { type: "item.completed", item: { id: "r", type: "reasoning", text: "reasoning is not indexed" } },
  { type: "item.started", item: { id: "m2", type: "agent_message", text: "started items are not indexed" } },
  { type: "error", message: "fatal: cache corrupted" },
  { type: "permission.requested", tool_name: "shell" }
]

// Lines no Logbook writer produces: undecodable text lines, an undecodable quiet line, junk.
const ODD_LINES: ReadonlyArray<string> = [
  `{"schema_version":"0.18.0","event":{"type":"item.completed","item":{"type":"agent_message","text":"no id"}}}`,
  `{"schema_version":"0.18.0","event":{"type":"item.completed","item":{"id":"x","type":"unknown_item","text":"z"}}}`,
  `{"schema_version":"0.18.0","event":{"type":"item.started","item":{"id":"x","type":"agent_message"}}}`,
  `{"schema_version":"0.18.0","event":{"type":"error","message":7}}`,
  `{"schema_version":"0.18.0","event":{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"ls","status":"failed","arguments":{"n":1e400}}}}`,
  `{"schema_version":"0.18.0","event":{"type":"turn.started","context":{"origin":"nobody"}}}`,
  `{"schema_version":"0.18.0","event":{"type":"some.future_event","text":"kept as unknown"}}`,
  ``,
  `not json at all`,
  `{"schema_version":"0.18.0","event":{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"extra fields \\u00e9","more":[1,{"a":null}]},"x":1}}`
]

const LINES = [...EVENTS.map(encodeLine), ...ODD_LINES]

const sameDocuments = (root: string, name: string) =>
  Effect.gen(function*() {
    const streamed = [...(yield* Stream.runCollect(sessionHistoryDocuments(root, name)))]
    const built = yield* sessionSearchDocuments(root, name, "history")
    assert.deepStrictEqual(built, [...streamed].sort((a, b) => a.chunk - b.chunk))
    return streamed.length
  })

describe("history documents of the search build", () => {
  it.effect.prop(
    "one read with the fast decoder gives exactly the documents of the decoded event stream",
    { picks: Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: LINES.length - 1 }))) },
    ({ picks }) =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("logbook-history-docs-")
        const body = picks.map((i) => LINES[i] ?? "").join("\n")
        plantSession(root, "s1", { events: `${body}\n`, manifest: { turn_count: 0, event_count: 0 } })
        yield* sameDocuments(root, "s1")
      }).pipe(Effect.scoped, Effect.provide(nodeLayer())),
    { arbitrary: { runs: 80 } }
  )

  it.effect("a log the store wrote is read through its trusted turn index and gives the same documents", () =>
    Effect.gen(function*() {
      const { root } = yield* sessionsRoot("logbook-history-docs-")
      const log = yield* openLog(root, "s1")
      const turn = (goal: string): ReadonlyArray<ThreadEvent> => [
        { type: "turn.started", context: { ...context, origin: "user", goal } },
        ...EVENTS.slice(5),
        { type: "turn.completed", usage }
      ]
      yield* appendAll(log, [...turn("first goal"), ...turn("second goal"), ...turn("third goal")])
      yield* log.flush
      const docs = yield* sameDocuments(root, "s1")
      assert.strictEqual(docs, 3)
    }).pipe(Effect.scoped, Effect.provide(nodeLayer())))
})

describe("stored snippets", () => {
  const Piece = Schema.Literals(["word ", "  ", "\n\t", "é", "\ud83d\ude00", "x", " \u00a0 ", "long".repeat(40)])
  it.prop(
    "the snippet from a prefix equals the snippet of the whole text",
    [Schema.Array(Piece).check(Schema.isMaxLength(400))],
    ([pieces]) => {
      const text = pieces.join("")
      assert.strictEqual(storedSnippet(text), snippetAround(text, new Set(), 240))
    },
    { arbitrary: { runs: 300 } }
  )
})

describe("source paths", () => {
  const Piece = Schema.Literals(["/", "a", ".", "..", "b.c", "//", "\\", "é"])
  it.prop(
    "joined by hand exactly as childPath joins them",
    [Schema.Array(Piece).check(Schema.isMaxLength(8)), Schema.Array(Piece).check(Schema.isMaxLength(3))],
    ([rootPieces, namePieces]) => {
      const root = `/${rootPieces.join("")}`
      const name = namePieces.join("")
      if (name.length === 0) return
      assert.strictEqual(sourcePath(root, name, "history"), childPath(root, name, "events.jsonl"))
      assert.strictEqual(sourcePath(root, name, "facts"), childPath(root, name, "derived", "memory.json"))
    },
    { arbitrary: { runs: 500 } }
  )
})
