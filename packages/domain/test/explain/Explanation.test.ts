import { assert, describe, it } from "@effect/vitest"
import { ev, items, unifiedDiff } from "@logbook/testkit"
import { Result } from "effect"
import { createHash } from "node:crypto"
import { encodeLine } from "../../src/contract/Encode.ts"
import type { ThreadEvent } from "../../src/contract/ThreadEvent.ts"
import type { ExplanationModel, ExplanationRecord, ExplanationScope } from "../../src/explain/Explanation.ts"
import { evidenceReferences, makeExplanationFold, pageExplanation } from "../../src/explain/Explanation.ts"

/** Records of events as they would sit in events.jsonl (plus raw lines for malformed ones). */
const recordsOf = (lines: ReadonlyArray<ThreadEvent | string>): Array<ExplanationRecord> => {
  let offset = 0
  return lines.map((l) => {
    const text = `${typeof l === "string" ? l : encodeLine(l)}\n`
    const bytes = Buffer.from(text)
    const parsed: unknown = (() => {
      const r = Result.try(() => JSON.parse(text))
      return r._tag === "Success" ? r.success : undefined
    })()
    const event = typeof parsed === "object" && parsed !== null && "event" in parsed &&
        typeof parsed.event === "object" && parsed.event !== null && !Array.isArray(parsed.event)
      ? { ...parsed.event }
      : undefined
    const record: ExplanationRecord = {
      offset,
      length: bytes.length,
      digest: () => createHash("sha256").update(bytes).digest("hex"),
      event
    }
    offset += bytes.length
    return record
  })
}

const explain = (lines: ReadonlyArray<ThreadEvent | string>, scope: ExplanationScope = "task"): ExplanationModel => {
  const fold = makeExplanationFold("s1")
  for (const r of recordsOf(lines)) fold.add(r)
  return fold.model({ scope, revision: "rev", evictedTurns: 0 })
}

const verify = { activity: "verification" } as const
const mutate = { activity: "mutation" } as const

/** The raw line of `event` with `arguments` added to its item (as importers record tool calls). */
const withArguments = (event: ThreadEvent, args: Record<string, unknown>): string => {
  const line: { event: { item: Record<string, unknown> } } = JSON.parse(encodeLine(event))
  line.event.item.arguments = args
  return JSON.stringify(line)
}

describe("Explanation", () => {
  it("a tool call is labelled with its subject argument, kept when a later record omits the arguments", () => {
    const m = explain([
      items.turn("t", "read it"),
      withArguments(items.tool("started", "r1", "Read", "in_progress", undefined, { task: "t" }), {
        file_path: "src/a.ts",
        limit: 20
      }),
      items.tool("completed", "r1", "Read", "completed", "success", { task: "t" }),
      withArguments(items.tool("completed", "r2", "TodoWrite", "completed", "success", { task: "t" }), {
        todos: []
      })
    ])
    assert.deepStrictEqual(m.actions.map((a) => a.label), ["Read src/a.ts", "TodoWrite"])
  })

  it("task scope covers the latest user task and session scope every task", () => {
    const log = [
      items.turn("t1", "first goal"),
      items.command("completed", "c1", "ls", "completed", 0, { task: "t1" }),
      ev.completed(),
      items.turn("t2", "second goal"),
      items.command("completed", "c2", "pwd", "completed", 0, { task: "t2" }),
      items.turn("t2", undefined, "correction"),
      ev.completed()
    ]
    const task = explain(log)
    assert.strictEqual(task.task_id, "t2")
    assert.deepStrictEqual(task.goals.map((g) => g.label), ["second goal"])
    assert.deepStrictEqual(task.actions.map((a) => a.label), ["pwd"])
    assert.strictEqual(task.status, "completed")
    const session = explain(log, "session")
    assert.strictEqual(session.task_id, null)
    assert.deepStrictEqual(session.goals.map((g) => g.label), ["first goal", "second goal"])
    assert.deepStrictEqual(session.actions.map((a) => a.label), ["ls", "pwd"])
  })

  it("folds started, updated and completed records of one identity into one operation, never regressing", () => {
    const m = explain([
      items.turn("t", "g"),
      items.command("started", "c", "npm test", "in_progress", undefined, { task: "t" }),
      items.command("completed", "c", "npm test", "completed", 0, { task: "t" }),
      items.command("updated", "c", "npm test", "in_progress", undefined, { task: "t" }),
      // Same item id under another actor is another operation.
      items.command("completed", "c", "npm test", "failed", 1, { task: "t", actor: "other" })
    ])
    assert.strictEqual(m.actions.length, 2)
    assert.strictEqual(m.actions[0]?.status, "completed")
    assert.strictEqual(m.actions[1]?.status, "failed")
    assert.strictEqual(m.failures.length, 1)
  })

  it("keeps the evidence of an identical re-completion and replaces a different one", () => {
    const log = [
      items.turn("t", "g"),
      items.command("completed", "c", "make", "completed", 0, { task: "t" }),
      items.command("completed", "c", "make", "completed", 0, { task: "t" })
    ]
    const same = explain(log)
    const records = recordsOf(log)
    assert.strictEqual(same.actions[0]?.evidence.offset, records[1]?.offset)
    const changed = explain([...log, items.command("completed", "c", "make", "failed", 2, { task: "t" })])
    assert.strictEqual(changed.actions[0]?.status, "failed")
    assert.strictEqual(changed.actions[0]?.evidence.offset, recordsOf([...log, ev.completed()])[3]?.offset)
  })

  it("folds tool outputs into their invocation by call id (aliases are not new actions)", () => {
    const m = explain([
      items.turn("t", "g"),
      items.tool("started", "call", "run_tests", "in_progress", undefined, { task: "t", ...verify }),
      items.output("updated", "call:output", "call", "in_progress", undefined, { task: "t", ...verify }),
      items.output("completed", "call:execution-output", "call", "completed", 0, { task: "t", ...verify }),
      items.tool("completed", "call", "run_tests", "completed", "success", { task: "t", ...verify })
    ])
    assert.strictEqual(m.actions.length, 1)
    assert.strictEqual(m.verification[0]?.status, "passed")
    assert.strictEqual(m.verification[0]?.exit_code, 0)
  })

  it("gives every verification status its rule", () => {
    const t = { task: "t", ...verify }
    const m = explain([
      items.turn("t", "g"),
      items.command("completed", "pass", "npm test", "completed", 0, t),
      items.command("completed", "fail", "npm test", "failed", 1, t),
      items.command("completed", "noexit", "npm test", "completed", undefined, t),
      items.command("started", "pending", "npm test", "in_progress", undefined, t),
      items.tool("completed", "denied", "test", "failed", "permission_rejected", t),
      items.tool("completed", "cancelled", "test", "completed", "cancelled", t),
      items.tool("completed", "cancelledButPassed", "test", "completed", "cancelled", t),
      items.output("completed", "o", "cancelledButPassed", "completed", 0, t),
      items.tool("completed", "nooutput", "test", "completed", "success", t),
      items.tool("started", "asyncPending", "test", "in_progress", undefined, t),
      items.output("updated", "o2", "asyncPending", "in_progress", undefined, t)
    ])
    const status = Object.fromEntries(m.verification.map((v) => [v.fact.label + v.fact.evidence.item_id, v.status]))
    assert.deepStrictEqual(Object.values(status), [
      "passed",
      "failed",
      "unconfirmed",
      "pending",
      "failed or denied",
      "cancelled",
      "passed",
      "unconfirmed",
      "pending"
    ])
    // Cancelled is not a failure; denied and failed are.
    assert.deepStrictEqual(m.failures.map((f) => f.evidence.item_id), ["fail", "denied"])
    assert.isTrue(m.completeness.warnings.some((w) => w.includes("no exit code")))
  })

  it("a passing check is fresh only when it started after every mutation attempt", () => {
    const t = { task: "t" }
    const stale = explain([
      items.turn("t", "g"),
      items.command("started", "check", "npm test", "in_progress", undefined, { ...t, ...verify }),
      items.fileChange("completed", "edit", ["src/a.ts"], "failed", undefined, t),
      items.command("completed", "check", "npm test", "completed", 0, { ...t, ...verify })
    ])
    assert.strictEqual(stale.verification[0]?.status, "passed")
    assert.isFalse(stale.verification[0]?.fresh)
    assert.isTrue(stale.review_priorities.some((r) => r.reason.includes("No passing verification")))
    const fresh = explain([
      items.turn("t", "g"),
      items.command("completed", "mut", "sed -i x", "completed", 0, { ...t, ...mutate }),
      items.command("completed", "check", "npm test", "completed", 0, { ...t, ...verify })
    ])
    assert.isTrue(fresh.verification[0]?.fresh)
    // Argument streaming of a tool before an edit does not count as its start.
    const tool = explain([
      items.turn("t", "g"),
      items.tool("started", "call", "test", "in_progress", undefined, { ...t, ...verify }),
      items.fileChange("completed", "edit", ["src/a.ts"], "completed", unifiedDiff("src/a.ts", 3, ["x"]), t),
      items.output("completed", "out", "call", "completed", 0, { ...t, ...verify })
    ])
    assert.isTrue(tool.verification[0]?.fresh)
  })

  it("recognises unlabelled checks from their command line; an explicit activity still wins", () => {
    const t = { task: "t" }
    const m = explain([
      items.turn("t", "g"),
      items.fileChange("completed", "edit", ["src/a.go"], "completed", unifiedDiff("src/a.go", 3, ["x"]), t),
      items.command("completed", "grep", "grep -rn test src", "completed", 0, t),
      items.command("completed", "lint", "mise run lint 2>&1 | tail -20", "completed", 1, t),
      items.command("completed", "labelled", "npm test", "completed", 0, { ...t, activity: "inspection" }),
      items.command("completed", "test", "cd cli && go test ./... 2>&1 | head -100", "completed", 0, t)
    ])
    assert.deepStrictEqual(m.verification.map((v) => [v.fact.evidence.item_id, v.status, v.exit_code, v.fresh]), [
      ["lint", "failed", 1, false],
      ["test", "passed", 0, true]
    ])
    assert.isFalse(m.review_priorities.some((r) => r.reason.includes("No passing verification")))
    const unverified = explain([
      items.turn("t", "g"),
      items.command("completed", "test", "go test ./...", "completed", 0, t),
      items.fileChange("completed", "edit", ["src/a.go"], "completed", unifiedDiff("src/a.go", 3, ["x"]), t)
    ])
    assert.isFalse(unverified.verification[0]?.fresh)
    assert.isTrue(unverified.review_priorities.some((r) => r.reason.includes("No passing verification")))
  })

  it("de-duplicates edits and reads each path's first hunk line", () => {
    const t = { task: "t" }
    const diff = unifiedDiff("src/a.ts", 12, ["const a = 1"]) + unifiedDiff("src/b.ts", 40, ["const b = 2"])
    const m = explain([
      items.turn("t", "g"),
      items.fileChange("started", "e1", ["src/a.ts", "src/b.ts"], "completed", diff, t),
      items.fileChange("completed", "e1", ["src/a.ts", "src/b.ts"], "completed", diff, t),
      items.fileChange("completed", "e1", ["src/a.ts", "src/b.ts"], "completed", diff, t),
      items.fileChange("completed", "e2", ["src/a.ts"], "completed", undefined, t),
      items.fileChange("completed", "e3", ["src/c.ts"], "failed", undefined, t)
    ])
    assert.strictEqual(m.edit_operations, 2)
    assert.deepStrictEqual(m.changes.map((c) => [c.path, c.line]), [["src/a.ts", 12], ["src/b.ts", 40]])
    assert.include(m.completeness.warnings, "diff unavailable for 1 recorded file change")
    assert.deepStrictEqual(m.failures.map((f) => f.label), ["src/c.ts"])
  })

  it("records decisions as agent-reported and orders review priorities high first", () => {
    const t = { task: "t" }
    const m = explain([
      items.turn("t", "g"),
      items.decision("d1", "Use a queue", "Ordering matters", t, ["a lock"]),
      items.fileChange(
        "completed",
        "e1",
        ["src/api.ts"],
        "completed",
        unifiedDiff("src/api.ts", 1, ["export const f = 1"]),
        t
      ),
      items.fileChange("completed", "e2", ["src/storage.rs"], "completed", unifiedDiff("src/storage.rs", 1, ["x"]), t)
    ])
    assert.strictEqual(m.decisions[0]?.fact.label, "Use a queue")
    assert.strictEqual(m.decisions[0]?.rationale, "Ordering matters")
    assert.deepStrictEqual(m.decisions[0]?.alternatives, ["a lock"])
    const first = m.review_priorities[0]
    assert.strictEqual(first?.priority, "high")
    assert.strictEqual(first?.fact.path, "src/storage.rs")
    assert.isTrue(m.review_priorities.some((r) => r.reason === "Public API" && r.fact.path === "src/api.ts"))
  })

  it("flags large diffs and repeated failures as medium review signals", () => {
    const t = { task: "t" }
    const big = unifiedDiff("src/big.ts", 1, Array.from({ length: 200 }, (_, i) => `line ${i}`))
    const m = explain([
      items.turn("t", "g"),
      items.fileChange("completed", "e1", ["src/big.ts"], "completed", big, t),
      items.command("completed", "c1", "make", "failed", 2, t),
      items.command("completed", "c2", "make", "failed", 2, t)
    ])
    const reasons = m.review_priorities.map((r) => r.reason)
    assert.include(reasons, "Large diff (≥ 200 changed lines)")
    assert.include(reasons, "Repeated recorded failures")
    assert.include(reasons, "No passing verification after the last mutation")
    assert.isTrue(m.review_priorities.every((r) => r.priority === "medium"))
    // One failure is not a pattern; a small diff is not large.
    const small = explain([
      items.turn("t", "g"),
      items.fileChange("completed", "e1", ["src/big.ts"], "completed", unifiedDiff("src/big.ts", 1, ["x"]), t),
      items.command("completed", "c1", "make", "failed", 2, t)
    ])
    assert.notInclude(small.review_priorities.map((r) => r.reason), "Repeated recorded failures")
    assert.notInclude(small.review_priorities.map((r) => r.reason), "Large diff (≥ 200 changed lines)")
  })

  it("explains importer-shaped sessions without contexts, counting them as legacy", () => {
    const m = explain([
      { type: "thread.started", thread_id: "th" },
      { type: "turn.started" },
      items.message("m1", "I will fix it"),
      items.command("completed", "c1", "cargo test", "completed", 0),
      items.fileChange("completed", "f1", ["src/lib.rs"], "completed", unifiedDiff("src/lib.rs", 7, ["fn x() {}"])),
      items.tool("completed", "t1", "read_file", "completed", "success"),
      items.mcp("completed", "m2", "search", "completed"),
      ev.completed()
    ])
    assert.strictEqual(m.task_id, null)
    assert.strictEqual(m.status, "completed")
    assert.strictEqual(m.actions.length, 3)
    assert.deepStrictEqual(m.changes.map((c) => c.line), [7])
    assert.strictEqual(m.completeness.legacy_records, 6)
    assert.strictEqual(m.goals.length, 0)
  })

  it("counts malformed and unknown records distinctly from activity", () => {
    const m = explain([
      "not json",
      `{"schema_version":"0.18.0","event":{"type":"item.completed","item":{"id":"x","type":"command_execution","command":1,"status":"completed"}}}`,
      `{"schema_version":"0.18.0","event":{"type":"future.kind","x":1}}`
    ])
    assert.strictEqual(m.completeness.malformed_records, 2)
    assert.strictEqual(m.completeness.unknown_records, 1)
    assert.strictEqual(m.actions.length, 0)
    assert.strictEqual(m.status, "unavailable")
  })

  it("redacts secrets, control characters and overlong labels", () => {
    const m = explain([
      items.turn("t", "deploy with password=hunter2 \u001b[31mred\u001b[0m"),
      items.command(
        "completed",
        "c",
        `curl -H "Authorization: Bearer abcdefghijklmnop" ${"x".repeat(500)}`,
        "completed",
        0,
        {
          task: "t"
        }
      )
    ])
    const goal = m.goals[0]?.label ?? ""
    assert.notInclude(goal, "hunter2")
    assert.notInclude(goal, "\u001b")
    const action = m.actions[0]?.label ?? ""
    assert.notInclude(action, "abcdefghijklmnop")
    assert.isTrue(action.endsWith("[truncated; inspect evidence]"))
  })

  it("pages 100 maximal decisions under 64 KiB with every decision reachable", () => {
    const long = "r".repeat(2000)
    const log: Array<ThreadEvent> = [items.turn("t", "g")]
    for (let i = 0; i < 100; i++) {
      log.push(items.decision(`d${i}`, "s".repeat(300), long, { task: "t" }, ["a".repeat(300), "b".repeat(300)]))
    }
    const m = explain(log)
    assert.strictEqual(m.decisions.length, 100)
    const seen: Array<string> = []
    let offset: number | null = 0
    while (offset !== null) {
      const page = pageExplanation(m, offset)
      assert.isAtMost(Buffer.byteLength(JSON.stringify(page.model)), 64 * 1024)
      for (const d of page.model.decisions) seen.push(d.fact.evidence.item_id ?? "")
      offset = page.next_offset
    }
    assert.strictEqual(seen.length, 100)
    assert.strictEqual(new Set(seen).size, 100)
    assert.isAbove(evidenceReferences(m).length, 99)
  })
})
