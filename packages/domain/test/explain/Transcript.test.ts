/**
 * The transcript fold: turns with their prompts, items merged over their records with every
 * record's offset, tool outputs joined to their invocation, texts redacted and bounded, and
 * entries past the total bound counted instead of kept.
 */
import { assert, describe, it } from "@effect/vitest"
import { items } from "@logbook/testkit"
import type { ThreadEvent } from "../../src/contract/ThreadEvent.ts"
import type { ExplanationRecord } from "../../src/explain/Explanation.ts"
import { makeTranscriptFold, TRANSCRIPT_LIMITS } from "../../src/explain/Explanation.ts"

/** Records of events at made-up offsets (the transcript reads only offsets and events). */
const fold = (events: ReadonlyArray<ThreadEvent>) => {
  const f = makeTranscriptFold()
  events.forEach((e, i) => {
    const event: ExplanationRecord["event"] = JSON.parse(JSON.stringify(e))
    f.add({ offset: i * 100, length: 100, digest: () => "d", event })
  })
  return f.transcript()
}

describe("the transcript fold", () => {
  it("groups items under the turn of their prompt, merging an item's records", () => {
    const t = fold([
      items.message("m0", "before any turn"),
      items.turn("t", "fix the bug"),
      items.message("m1", "Looking at it"),
      items.command("started", "c1", "go test ./...", "in_progress"),
      items.command("completed", "c1", "go test ./...", "failed", 1),
      items.tool("started", "tool", "Read", "in_progress"),
      items.output("completed", "out", "tool", "completed", 0),
      items.fileChange("completed", "e1", ["src/a.go"], "completed", "--- a/src/a.go\n+++ b/src/a.go\n@@\n-x\n+y\n"),
      items.turn("t2", "now the docs")
    ])
    assert.deepStrictEqual(t.turns.map((x) => [x.index, x.prompt, x.entries.length]), [
      [0, null, 1],
      [1, "fix the bug", 4],
      [2, "now the docs", 0]
    ])
    const [message, command, tool, edit] = t.turns[1]?.entries ?? []
    assert.strictEqual(message?.text, "Looking at it")
    assert.deepStrictEqual([command?.title, command?.status, command?.exitCode, command?.offsets], [
      "go test ./...",
      "failed",
      1,
      [300, 400]
    ])
    assert.deepStrictEqual([tool?.title, tool?.exitCode, tool?.offsets], ["Read", 0, [500, 600]])
    assert.deepStrictEqual([edit?.kind, edit?.title], ["edit", "src/a.go"])
    assert.include(edit?.text ?? "", "+y")
  })

  it("redacts and bounds every text, and counts the entries past the total bound", () => {
    const secret = "export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    const big = "x".repeat(TRANSCRIPT_LIMITS.output * 2)
    const many = Math.ceil(TRANSCRIPT_LIMITS.total / TRANSCRIPT_LIMITS.output) + 5
    const t = fold([
      items.turn("t", secret),
      ...Array.from({ length: many }, (_, i) => items.command("completed", `c${i}`, "cat big", "completed", 0)).map((
        e
      ) => e.type === "item.completed" ? { ...e, item: { ...e.item, aggregated_output: big } } : e)
    ])
    assert.notInclude(t.turns[0]?.prompt ?? "", "ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    const kept = t.turns[0]?.entries ?? []
    assert.isTrue(kept.every((e) => e.text.length <= TRANSCRIPT_LIMITS.output + 64))
    assert.isAbove(t.omittedEntries, 0)
    assert.strictEqual(kept.length + t.omittedEntries, many)
  })
})
