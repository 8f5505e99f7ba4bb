/**
 * Facts out of memory views (docs/search.md#facts) and views derived from logs
 * (docs/search.md#derived-memory): missing and corrupt views, the limit, a deterministic
 * cross-session order, the legacy envelope fixture, and a derived view that never replaces a host's.
 */
import { assert, describe, it } from "@effect/vitest"
import { writeMemoryView } from "@logbook/store"
import { appendAll, ev, nodeLayer, openLog, sessionsRoot } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { deriveSessionMemory } from "../../src/memory/MemoryDerivation.ts"
import { queryFacts, sessionMemoryFacts } from "../../src/memory/MemoryFacts.ts"
import { searchMemory } from "../../src/memory/search/MemorySearch.ts"

const testRoot = sessionsRoot("projections")

const fixture = path.join(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "..",
  "test",
  "fixtures",
  "reference",
  "vtcode-legacy-history-envelope.session-foo.memory.json"
)

const plant = (root: string, name: string, text: string): string => {
  const dir = path.join(root, name, "derived")
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, "memory.json"), text)
  return path.join(dir, "memory.json")
}

describe("MemoryFacts", () => {
  it.effect("reads one session's non-empty facts up to the limit; missing is empty, corrupt is a typed error", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      assert.deepStrictEqual(yield* sessionMemoryFacts(root, "none", 32), [])
      plant(
        root,
        "s",
        JSON.stringify({
          summary: "x",
          grounded_facts: [{ fact: "a" }, { fact: "  " }, {}, { fact: "b" }, { fact: "c" }]
        })
      )
      assert.deepStrictEqual(yield* sessionMemoryFacts(root, "s", 2), [{ fact: "a", session_id: "s" }, {
        fact: "b",
        session_id: "s"
      }])
      const file = plant(root, "bad", "{oops")
      const error = yield* Effect.flip(sessionMemoryFacts(root, "bad", 32))
      assert.strictEqual(error._tag, "CorruptFile")
      if (error._tag === "CorruptFile") assert.strictEqual(error.path, file)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("lists every session's facts in directory-name order, skipping corrupt views", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      plant(root, "b", JSON.stringify({ grounded_facts: [{ fact: "b0" }] }))
      plant(root, "a", JSON.stringify({ grounded_facts: [{ fact: "a0" }, { fact: "a1" }] }))
      plant(root, "c", "not json")
      plant(root, "session-foo", fs.readFileSync(fixture, "utf8"))
      const all = yield* queryFacts(root, 10)
      assert.deepStrictEqual(all.map((f) => `${f.session_id}/${f.fact}`), [
        "a/a0",
        "a/a1",
        "b/b0",
        "session-foo/the widget is blue"
      ])
      assert.strictEqual((yield* queryFacts(root, 2)).length, 2)
      assert.deepStrictEqual((yield* queryFacts(root, 10, { session: "b" })).map((f) => f.fact), ["b0"])
      // The legacy envelope (schema 2, no timestamps) is searchable too.
      const hits = yield* searchMemory(root, "widget", { now: 0 })
      assert.deepStrictEqual(hits.map((h) => h.chunk_id), ["session-foo:0"])
    }).pipe(Effect.provide(nodeLayer())))
})

describe("deriveSessionMemory", () => {
  it.effect("derives grounded facts with turn sources from the log, idempotently, and never replaces a host view", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const log = yield* openLog(root, "d")
      yield* appendAll(log, [ev.turnStarted(), ev.msg("Refactored the parser"), ev.completed()])
      yield* appendAll(log, [ev.turnStarted(), ev.failed("tests failed: 3 errors")])
      yield* log.flush
      const first = yield* deriveSessionMemory(root, "d")
      assert.isTrue(first.written)
      const view = JSON.parse(fs.readFileSync(first.path, "utf8"))
      assert.strictEqual(view.origin, "derived")
      assert.strictEqual(view.schema_version, 3)
      assert.deepStrictEqual(view.grounded_facts.map((f: { fact: string }) => f.fact), [
        "Refactored the parser",
        "tests failed: 3 errors"
      ])
      assert.match(view.grounded_facts[0].source, /^turn 1, events\.jsonl@\d+$/)
      assert.match(view.grounded_facts[1].source, /^turn 2, /)
      const bytes = fs.readFileSync(first.path)
      const again = yield* deriveSessionMemory(root, "d")
      assert.isFalse(again.written)
      assert.deepStrictEqual(fs.readFileSync(first.path), bytes)
      const facts = yield* sessionMemoryFacts(root, "d", 32)
      assert.strictEqual(facts.length, 2)
      yield* writeMemoryView(root, "d", {
        summary: "host",
        task_summary: null,
        spec_summary: null,
        evaluation_summary: null,
        touched_files: [],
        grounded_facts: [{ fact: "from the host", source: "host" }],
        history_artifact_path: null,
        generated_at: "2026-01-01T00:00:00Z"
      })
      const host = fs.readFileSync(first.path, "utf8")
      const kept = yield* deriveSessionMemory(root, "d")
      assert.isTrue(kept.keptHostView)
      assert.strictEqual(fs.readFileSync(first.path, "utf8"), host)
      const missing = yield* Effect.flip(deriveSessionMemory(root, "nope"))
      assert.strictEqual(missing._tag, "SessionNotFound")
    }).pipe(Effect.provide(nodeLayer())))
})
