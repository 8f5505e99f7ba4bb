import { assert, describe, it } from "@effect/vitest"
import type { ExplanationModel, ExplanationRecord } from "../../src/explain/Explanation.ts"
import { makeExplanationFold } from "../../src/explain/Explanation.ts"
import { isJsonObject } from "../../src/internal/jsonText.ts"
import type { Json } from "./explanationRecords.ts"
import { eventSequence, recordsOf, seeded, WRONG } from "./explanationRecords.ts"

// A record whose used fields have the wrong shape is counted as malformed and leaves no trace:
// the model equals the model of the valid records alone (same records, same offsets; a malformed
// record still takes a sequence number, which only orders facts), with one more malformed record.

const ctx = (extra: Json = {}): Json => ({
  task_id: "t1",
  turn_id: "u1",
  actor_id: "a1",
  timestamp: "2026-01-01T00:00:00Z",
  ...extra
})
const item = (phase: "started" | "updated" | "completed", body: Json): Json => ({ type: `item.${phase}`, item: body })

const DIFF = "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,2 +3,4 @@\n-old\n+export const a = 1\n context"

/** Valid items of every type the fold reads, keyed by the name used in the table. */
const ITEMS = {
  agent_message: { id: "g1", type: "agent_message", context: ctx(), text: "hi" },
  reasoning: { id: "g2", type: "reasoning", context: ctx(), text: "hmm" },
  plan: { id: "p1", type: "plan", context: ctx(), text: "1. read\n2. fix" },
  decision: { id: "d1", type: "decision", context: ctx(), summary: "use x", rationale: "faster", alternatives: ["y"] },
  command_execution: {
    id: "c1",
    type: "command_execution",
    context: ctx({ activity: "verification" }),
    command: "npm test",
    status: "completed",
    exit_code: 0
  },
  tool_invocation: {
    id: "r1",
    type: "tool_invocation",
    context: ctx({ activity: "inspection", parent_actor_id: "root" }),
    tool_name: "Read",
    arguments: { file_path: "src/a.ts" },
    status: "completed",
    outcome: "success"
  },
  tool_output: {
    id: "o1",
    type: "tool_output",
    context: ctx({ activity: "verification" }),
    call_id: "r1",
    status: "completed",
    exit_code: 0
  },
  file_change: {
    id: "e1",
    type: "file_change",
    context: ctx({ activity: "mutation" }),
    changes: [{ path: "src/a.ts", kind: "update" }],
    status: "completed",
    unified_diff: DIFF
  },
  mcp_tool_call: { id: "m1", type: "mcp_tool_call", context: ctx(), tool_name: "search", status: "completed" },
  web_search: { id: "w1", type: "web_search", context: ctx(), query: "effect docs" },
  harness: { id: "h1", type: "harness", context: ctx(), event: "compaction" },
  error: { id: "x1", type: "error", context: ctx(), message: "boom" }
} satisfies { readonly [name: string]: Json }

/** Valid events of every type the fold reads. */
const EVENTS = {
  "turn.started": {
    type: "turn.started",
    context: ctx({ origin: "user", goal: "fix it", parent_actor_id: "root" }),
    token_breakdown: { system: 5 }
  },
  "turn.completed": { type: "turn.completed", usage: { input_tokens: 3, output_tokens: 2 } },
  "turn.failed": { type: "turn.failed", message: "api error", usage: { input_tokens: 1 } },
  "turn.blocked": { type: "turn.blocked", message: "hook" },
  error: { type: "error", message: "stream error" },
  interjected: { type: "interjected", text: "stop" },
  "plan.approval.requested": { type: "plan.approval.requested", plan_file: "plan.md" },
  "plan.approval.resolved": { type: "plan.approval.resolved", decision: "approved" }
} satisfies { readonly [name: string]: Json }

/** A valid session using every template (items started, then completed). */
const BASE: ReadonlyArray<Json> = [
  EVENTS["turn.started"],
  ...Object.values(ITEMS).map((i) => item("started", i)),
  ...Object.values(ITEMS).map((i) => item("completed", i)),
  ...Object.entries(EVENTS).filter(([k]) => k !== "turn.started").map(([, e]) => e),
  { type: "thread.completed", total_cost_usd: 0.5 }
]

/** `target` with the value at `path` replaced by `value` (removed when `value` is undefined); copies on the way. */
const setIn = (target: unknown, path: ReadonlyArray<string | number>, value: unknown): unknown => {
  const [head, ...rest] = path
  if (head === undefined) return value
  if (Array.isArray(target)) {
    const copy: Array<unknown> = [...target]
    copy[Number(head)] = setIn(copy[Number(head)], rest, value)
    return copy
  }
  if (!isJsonObject(target)) return target
  const copy: Record<string, unknown> = { ...target }
  if (rest.length === 0 && value === undefined) delete copy[String(head)]
  else copy[String(head)] = setIn(copy[String(head)], rest, value)
  return copy
}

/** A copy of `o` with the field at `path` set to `value` (removed when `value` is undefined). */
const withField = (o: Json, path: ReadonlyArray<string | number>, value: unknown): Json => {
  const out = setIn(o, path, value)
  return isJsonObject(out) ? out : {}
}

interface Row {
  readonly name: string
  readonly event: Json
}

/** Wrong values for a field of the given kind (`undefined`: the field is missing). */
const wrong = {
  required: [undefined, ...WRONG.filter((v) => typeof v !== "string")],
  optional: WRONG.filter((v) => typeof v !== "string" && v !== null),
  optionalInt: [1.5, "0", true, { a: 1 }],
  object: ["text", 42, [1], true],
  literal: [undefined, "bogus", 42, null],
  optionalLiteral: ["bogus", 42, true],
  element: ["text", 42, null, [1], true]
} as const

type Kind = keyof typeof wrong

/** Every field the fold reads from an item, with its kind. */
const ITEM_FIELDS: { readonly [name: string]: ReadonlyArray<readonly [ReadonlyArray<string | number>, Kind]> } = {
  agent_message: [[["text"], "required"]],
  reasoning: [[["text"], "required"]],
  plan: [[["text"], "required"]],
  decision: [[["summary"], "required"], [["rationale"], "required"]],
  command_execution: [[["command"], "required"], [["status"], "literal"], [["exit_code"], "optionalInt"]],
  tool_invocation: [[["tool_name"], "required"], [["status"], "literal"], [["outcome"], "optionalLiteral"]],
  tool_output: [[["call_id"], "required"], [["status"], "literal"], [["exit_code"], "optionalInt"]],
  file_change: [
    [["status"], "literal"],
    [["changes"], "required"],
    [["changes", 0], "element"],
    [["changes", 0, "path"], "required"],
    [["unified_diff"], "optional"]
  ],
  mcp_tool_call: [[["tool_name"], "required"], [["status"], "optionalLiteral"]],
  web_search: [[["query"], "required"]],
  harness: [[["event"], "required"]],
  error: [[["message"], "required"]]
}

/** Fields every item and every item context are read for. */
const COMMON_ITEM_FIELDS: ReadonlyArray<readonly [ReadonlyArray<string | number>, Kind]> = [
  [["id"], "required"],
  [["type"], "literal"],
  [["context"], "object"],
  [["context", "task_id"], "required"],
  [["context", "turn_id"], "required"],
  [["context", "actor_id"], "required"],
  [["context", "parent_actor_id"], "optional"],
  [["context", "timestamp"], "required"],
  [["context", "activity"], "optionalLiteral"]
]

/** Every field the fold reads from an event (other than its item), with its kind. */
const EVENT_FIELDS: { readonly [name: string]: ReadonlyArray<readonly [ReadonlyArray<string | number>, Kind]> } = {
  "turn.started": [
    [["type"], "required"],
    [["context"], "object"],
    [["context", "task_id"], "required"],
    [["context", "turn_id"], "required"],
    [["context", "actor_id"], "required"],
    [["context", "parent_actor_id"], "optional"],
    [["context", "timestamp"], "required"],
    [["context", "origin"], "literal"],
    [["context", "goal"], "optional"],
    [["token_breakdown"], "object"]
  ],
  "turn.completed": [[["usage"], "object"]],
  "turn.failed": [[["message"], "required"], [["usage"], "object"]],
  "turn.blocked": [[["message"], "required"]],
  error: [[["message"], "required"]],
  interjected: [[["text"], "optional"]],
  "plan.approval.requested": [[["plan_file"], "optional"]],
  "plan.approval.resolved": [[["decision"], "required"]]
}

const rowsOf = (
  name: string,
  event: Json,
  fields: ReadonlyArray<readonly [ReadonlyArray<string | number>, Kind]>,
  prefix: ReadonlyArray<string> = []
): Array<Row> =>
  fields.flatMap(([path, kind]) =>
    wrong[kind].map((value) => ({
      name: `${name} ${path.join(".")} = ${JSON.stringify(value) ?? "(missing)"}`,
      event: withField(event, [...prefix, ...path], value)
    }))
  )

/** One malformed event per (template, field read, wrong value). */
const MALFORMED: ReadonlyArray<Row> = [
  ...Object.entries(EVENTS).flatMap(([name, e]) => rowsOf(name, e, EVENT_FIELDS[name] ?? [])),
  // Every item type reads its context itself: the common fields for each type; its own fields in two phases.
  ...Object.entries(ITEMS).flatMap(([name, i]) =>
    rowsOf(`item.completed ${name}`, { type: "item.completed", item: i }, COMMON_ITEM_FIELDS, ["item"])
  ),
  ...["started", "updated", "completed"].flatMap((phase) =>
    Object.entries(ITEMS).flatMap(([name, i]) =>
      rowsOf(`item.${phase} ${name}`, { type: `item.${phase}`, item: i }, ITEM_FIELDS[name] ?? [], ["item"])
    )
  ),
  ...["started", "completed"].flatMap((phase) =>
    [undefined, "text", 42, [1]].map((value) => ({
      name: `item.${phase} item = ${JSON.stringify(value) ?? "(missing)"}`,
      event: withField({ type: `item.${phase}`, item: ITEMS.command_execution }, ["item"], value)
    }))
  ),
  { name: "event type = 42", event: { type: 42 } },
  { name: "item of an unknown type", event: item("completed", { id: "q1", type: "mystery", context: ctx() }) }
]

const OPTIONS = [
  { scope: "task", revision: "rev", evictedTurns: 0 },
  { scope: "session", revision: "rev", evictedTurns: 0 }
] as const

const modelsOf = (records: ReadonlyArray<ExplanationRecord>): { models: Array<ExplanationModel>; count: number } => {
  const fold = makeExplanationFold("s1")
  for (const r of records) fold.add(r)
  return { models: OPTIONS.map((o) => fold.model(o)), count: fold.records() }
}

const withMalformed = (m: ExplanationModel, extra: number): ExplanationModel => ({
  ...m,
  completeness: { ...m.completeness, malformed_records: m.completeness.malformed_records + extra }
})

/**
 * Feeds `events` and the same records without those at `bad`; the first run must count each bad
 * one as malformed and otherwise give the model of the second.
 */
const assertNoTrace = (events: ReadonlyArray<Json | undefined>, bad: ReadonlySet<number>, label: string) => {
  const records = recordsOf(events)
  const all = modelsOf(records)
  const valid = modelsOf(records.filter((_, i) => !bad.has(i)))
  assert.strictEqual(all.count, records.length, label)
  all.models.forEach((m, i) => {
    const expected = valid.models[i]
    assert.isDefined(expected)
    // Serialised, as the models leave the process (and much faster than a deep comparison).
    if (expected !== undefined) {
      assert.strictEqual(JSON.stringify(m), JSON.stringify(withMalformed(expected, bad.size)), label)
    }
  })
}

describe("Explanation: malformed records", () => {
  it("the base session is valid and uses every template", () => {
    const { models } = modelsOf(recordsOf(BASE))
    const session = models[1]
    assert.isDefined(session)
    assert.strictEqual(session?.completeness.malformed_records, 0)
    assert.strictEqual(session?.completeness.legacy_records, 0)
    assert.deepStrictEqual(session?.actions.map((a) => a.kind), ["command", "tool", "mcp", "web_search"])
    assert.strictEqual(session?.changes.length, 1)
    assert.isTrue(MALFORMED.length > 500, String(MALFORMED.length))
  })

  it("a record with any used field of the wrong shape is malformed and leaves no trace, wherever it is", () => {
    // The valid records keep their offsets; the bad one is spliced in (the fold never relates offsets).
    const valid = recordsOf(BASE)
    for (const at of [0, 14, BASE.length]) {
      const expected = modelsOf(valid).models.map((m) => JSON.stringify(withMalformed(m, 1)))
      for (const row of MALFORMED) {
        const bad = recordsOf([row.event])[0]
        assert.isDefined(bad)
        if (bad === undefined) continue
        const records = [...valid.slice(0, at), { ...bad, offset: 1_000_000 }, ...valid.slice(at)]
        const all = modelsOf(records)
        assert.strictEqual(all.count, records.length)
        assert.deepStrictEqual(all.models.map((m) => JSON.stringify(m)), expected, `${row.name} at ${at}`)
      }
    }
  })

  it("a line that did not parse is malformed and leaves no trace", () => {
    assertNoTrace([...BASE.slice(0, 5), undefined, ...BASE.slice(5)], new Set([5]), "unparsed line")
  })

  it("malformed records interleaved at random with valid ones are each counted and leave no trace", () => {
    for (let seed = 1; seed <= 150; seed++) {
      const next = seeded(seed)
      const valid = eventSequence(seed, 40, 0).filter((e): e is Json => e !== undefined)
      const events: Array<Json> = [...valid]
      const bad = new Set<number>()
      const k = 1 + Math.floor(next() * 8)
      for (let j = 0; j < k; j++) {
        const row = MALFORMED[Math.floor(next() * MALFORMED.length)]
        if (row === undefined) continue
        const at = Math.floor(next() * (events.length + 1))
        events.splice(at, 0, row.event)
        const shifted = [...bad].map((b) => b >= at ? b + 1 : b)
        bad.clear()
        for (const b of shifted) bad.add(b)
        bad.add(at)
      }
      // The generated valid records themselves may be malformed only by construction errors.
      assert.strictEqual(modelsOf(recordsOf(valid)).models[1]?.completeness.malformed_records, 0, `seed ${seed}`)
      assertNoTrace(events, bad, `seed ${seed}`)
    }
  })

  it("fields the fold does not check never make a record malformed", () => {
    const lenient: ReadonlyArray<Row> = [
      { name: "turn.completed message", event: { type: "turn.completed", message: 42 } },
      { name: "thread.completed subtype", event: { type: "thread.completed", subtype: 42, total_cost_usd: "x" } },
      { name: "turn.started context.activity", event: withField(BASE[0] ?? {}, ["context", "activity"], "bogus") },
      {
        name: "item context.origin",
        event: withField(item("completed", ITEMS.plan), ["item", "context", "origin"], 1)
      },
      {
        name: "decision alternatives",
        event: withField(item("completed", ITEMS.decision), ["item", "alternatives"], "x")
      },
      {
        name: "harness status (not a delegation)",
        event: withField(item("completed", ITEMS.harness), ["item", "status"], 1)
      },
      {
        name: "delegation session_id when task_id is recorded",
        event: item("completed", { ...ITEMS.harness, event: "delegated_agent_status", task_id: "c", session_id: 1 })
      },
      {
        name: "plan.approval.resolved automatic",
        event: { type: "plan.approval.resolved", decision: "ok", automatic: "yes" }
      },
      { name: "unknown event type", event: { type: "future.event", anything: [1] } }
    ]
    for (const row of lenient) {
      const { models } = modelsOf(recordsOf([...BASE, row.event]))
      assert.strictEqual(models[1]?.completeness.malformed_records, 0, row.name)
    }
  })

  it("a delegation with a bad status or child is malformed but its agent is noted (as it always was)", () => {
    const delegation = { ...ITEMS.harness, event: "delegated_agent_status", status: "running", task_id: "child" }
    for (const [field, value] of [["status", 1], ["task_id", 1], ["session_id", 1]] as const) {
      const bad = withField(
        { ...delegation, context: ctx({ actor_id: "a9", parent_actor_id: "a1" }) },
        field === "session_id" ? ["task_id"] : [field],
        field === "session_id" ? undefined : value
      )
      const event = item("completed", field === "session_id" ? { ...bad, session_id: value } : bad)
      const { models } = modelsOf(recordsOf([...BASE, event]))
      const session = models[1]
      assert.strictEqual(session?.completeness.malformed_records, 1, field)
      assert.isTrue(session?.agents.some((a) => a.actor_id === "a9" && a.parent_actor_id === "a1"), field)
      assert.isFalse(session?.actions.some((a) => a.kind === "delegation"), field)
      const legacy = modelsOf(recordsOf([...BASE, withField(event, ["item", "context"], undefined)])).models[1]
      assert.strictEqual(legacy?.completeness.legacy_records, 1, `${field} without a context`)
    }
  })

  it("a delegation with a bad exit code is malformed but recorded as in progress (as it always was)", () => {
    const event = item("completed", {
      ...ITEMS.harness,
      id: "h9",
      event: "delegated_agent_status",
      status: "completed",
      task_id: "child",
      exit_code: 1.5
    })
    const { models } = modelsOf(recordsOf([...BASE, event]))
    const session = models[1]
    assert.strictEqual(session?.completeness.malformed_records, 1)
    const delegation = session?.actions.filter((a) => a.kind === "delegation")
    assert.deepStrictEqual(delegation?.map((a) => [a.label, a.status]), [["delegated agent child", "in progress"]])
  })
})
