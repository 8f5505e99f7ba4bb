/**
 * Test support for the explanation fold: a seeded generator of plausible event sequences (every
 * event and item type the fold reads, small id pools so identities collide, optional noise that
 * puts wrong-typed values in any field) and the records the fold is fed for them. Plain JSON,
 * not Schema-encoded events, so tests can write shapes the contract would reject.
 */
import { createHash } from "node:crypto"
import type { ExplanationRecord } from "../../src/explain/Explanation.ts"

/** A JSON object as the fold sees it. */
export type Json = { readonly [key: string]: unknown }

/** A deterministic pseudo-random source (mulberry32): numbers in [0, 1). */
export const seeded = (seed: number): () => number => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Records of raw events in file order (`undefined` stands for a line that did not parse). */
export const recordsOf = (events: ReadonlyArray<Json | undefined>): Array<ExplanationRecord> => {
  let offset = 0
  return events.map((event, i) => {
    const text = `${event === undefined ? `not json ${i}` : JSON.stringify({ v: 1, event })}\n`
    const bytes = Buffer.from(text)
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

/** Values of the wrong type for any field. */
export const WRONG = [42, 1.5, true, "text", { a: 1 }, [1], null] as const

const pick = <A>(next: () => number, xs: ReadonlyArray<A>): A => {
  const x = xs[Math.floor(next() * xs.length)]
  if (x === undefined) return pick(next, xs)
  return x
}

const DIFFS = [
  "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,2 +3,4 @@\n-old\n+export const a = 1\n context",
  "diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n@@ -10 +12 @@\n-x\n+y",
  "@@ -5,1 +7,1 @@\n" + Array.from({ length: 210 }, (_, i) => `+line ${i}`).join("\n"),
  "--- /dev/null\n+++ b/src/auth/login.ts\n@@ -0,0 +1,2 @@\n+pub fn login() {}\n+x",
  "+++ b/lib/other.rs\n@@ -1 +1 @@\n+public class X {}"
]

/**
 * A generator of event sequences; `noise` is the chance that any one field is replaced by a wrong
 * value (with noise, unknown item types and unparsed lines appear too; without, every event is valid).
 */
export const eventSequence = (seed: number, length: number, noise: number): Array<Json | undefined> => {
  const next = seeded(seed)
  const chance = (p: number) => next() < p
  const task = () => pick(next, ["t1", "t2", "t3"])
  const actor = () => pick(next, ["a1", "a2", "sub1"])
  const itemId = () => pick(next, ["i1", "i2", "i3", "i4", "i5"])
  const noisy = (o: Record<string, unknown>): Json => {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(o)) {
      if (v === undefined) continue
      out[k] = noise > 0 && chance(noise) ? pick(next, [...WRONG, undefined]) : v
    }
    return out
  }
  const ctx = (item: boolean): Json | undefined =>
    chance(0.1) ? undefined : noisy({
      task_id: task(),
      turn_id: pick(next, ["u1", "u2"]),
      actor_id: actor(),
      parent_actor_id: chance(0.3) ? pick(next, ["a1", "root", undefined]) : undefined,
      timestamp: "2026-01-01T00:00:00Z",
      ...(item
        ? { activity: chance(0.6) ? pick(next, ["inspection", "verification", "mutation"]) : undefined }
        : {
          origin: pick(next, ["user", "user", "correction", "plan_approval", "continuation", "retry"]),
          goal: chance(0.8)
            ? pick(next, ["fix it", "# Context from my IDE setup:\n tabs\n## My request for Codex: do x", "token=abc"])
            : undefined
        })
    })
  const execStatus = () => pick(next, ["completed", "failed", "in_progress"])
  const item = (): Json => {
    const base = { id: itemId(), context: ctx(true) }
    switch (
      pick(next, [
        "agent_message",
        "reasoning",
        "plan",
        "decision",
        "command_execution",
        "command_execution",
        "tool_invocation",
        "tool_invocation",
        "tool_output",
        "tool_output",
        "file_change",
        "file_change",
        "mcp_tool_call",
        "web_search",
        "harness",
        "harness",
        "error",
        ...(noise > 0 ? ["mystery"] : [])
      ])
    ) {
      case "agent_message":
        return noisy({ ...base, type: "agent_message", text: "hello" })
      case "reasoning":
        return noisy({ ...base, type: "reasoning", text: "thinking" })
      case "plan":
        return noisy({ ...base, type: "plan", text: pick(next, ["1. a\n2. b", "", "  step one  "]) })
      case "decision":
        return noisy({
          ...base,
          type: "decision",
          summary: "use x",
          rationale: "because",
          alternatives: chance(0.5) ? ["y", 3, "z", "w", "v"] : undefined,
          evidence_ids: chance(0.5) ? ["e1", 2] : undefined
        })
      case "command_execution":
        return noisy({
          ...base,
          type: "command_execution",
          command: pick(next, ["npm test", "ls", "rm -rf build"]),
          status: execStatus(),
          exit_code: chance(0.7) ? pick(next, [0, 0, 1, 2]) : undefined
        })
      case "tool_invocation":
        return noisy({
          ...base,
          type: "tool_invocation",
          tool_name: pick(next, ["Read", "Bash", "Edit"]),
          arguments: chance(0.5) ? { file_path: pick(next, ["src/a.ts", " ", "b.ts"]), command: "x" } : undefined,
          status: execStatus(),
          outcome: chance(0.5)
            ? pick(next, [
              "success",
              "error",
              "permission_rejected",
              "permission_cancelled",
              "hook_denied",
              "cancelled"
            ])
            : undefined
        })
      case "tool_output":
        return noisy({
          ...base,
          type: "tool_output",
          call_id: itemId(),
          status: execStatus(),
          exit_code: chance(0.6) ? pick(next, [0, 1]) : undefined
        })
      case "file_change": {
        const paths = pick(next, [["src/a.ts"], ["package.json", "src/a.ts"], [], ["src/auth/login.ts"]])
        return noisy({
          ...base,
          type: "file_change",
          changes: paths.map((path) => noisy({ path, kind: "update" })),
          status: pick(next, ["completed", "failed"]),
          unified_diff: chance(0.7) ? pick(next, DIFFS) : undefined,
          diff_incomplete: chance(0.2) ? true : undefined
        })
      }
      case "mcp_tool_call":
        return noisy({
          ...base,
          type: "mcp_tool_call",
          tool_name: "search",
          status: chance(0.7) ? pick(next, ["started", "completed", "failed"]) : undefined
        })
      case "web_search":
        return noisy({ ...base, type: "web_search", query: "effect docs" })
      case "harness":
        return noisy({
          ...base,
          type: "harness",
          event: pick(next, ["delegated_agent_status", "delegated_agent_status", "compaction"]),
          status: chance(0.8) ? pick(next, ["running", "completed", "failed", "cancelled", "done"]) : undefined,
          task_id: chance(0.5) ? "child-task" : undefined,
          session_id: chance(0.5) ? "child-session" : undefined,
          exit_code: chance(0.4) ? pick(next, [0, 3]) : undefined
        })
      case "error":
        return noisy({ ...base, type: "error", message: "boom" })
      default:
        return noisy({ ...base, type: "mystery" })
    }
  }
  const usage = () =>
    chance(0.7) ? { input_tokens: 10, cached_input_tokens: 2, output_tokens: 5, other: "x" } : undefined
  const event = (): Json | undefined => {
    switch (
      pick(next, [
        "turn.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "turn.blocked",
        "thread.completed",
        "thread.started",
        "error",
        "item.started",
        "item.updated",
        "item.completed",
        "item.completed",
        "item.completed",
        "item.completed",
        "interjected",
        "plan.approval.requested",
        "plan.approval.resolved",
        "future.event",
        ...(noise > 0 ? ["malformed"] : [])
      ])
    ) {
      case "turn.started":
        return noisy({
          type: "turn.started",
          context: ctx(false),
          token_breakdown: chance(0.3) ? { system: 10, tools: 20, note: "x" } : undefined
        })
      case "turn.completed":
        return noisy({ type: "turn.completed", usage: usage() })
      case "turn.failed":
        return noisy({ type: "turn.failed", message: "api error", usage: usage() })
      case "turn.blocked":
        return noisy({ type: "turn.blocked", message: "hook", usage: usage() })
      case "thread.completed":
        return noisy({
          type: "thread.completed",
          total_cost_usd: chance(0.7) ? 0.25 : undefined,
          subtype: chance(0.5) ? pick(next, ["success", "error_max_turns"]) : undefined
        })
      case "thread.started":
        return noisy({ type: "thread.started", thread_id: "th" })
      case "error":
        return noisy({ type: "error", message: "stream error" })
      case "item.started":
      case "item.updated":
      case "item.completed":
        return noisy({ type: pick(next, ["item.started", "item.updated", "item.completed"]), item: item() })
      case "interjected":
        return noisy({ type: "interjected", text: chance(0.8) ? "stop, do y" : undefined })
      case "plan.approval.requested":
        return noisy({ type: "plan.approval.requested", plan_file: chance(0.5) ? "plan.md" : undefined })
      case "plan.approval.resolved":
        return noisy({ type: "plan.approval.resolved", decision: "approved", automatic: chance(0.5) })
      case "future.event":
        return noisy({ type: "future.event" })
      default:
        return undefined
    }
  }
  return Array.from({ length }, event)
}
