/**
 * The explanation reducer (docs/explain.md): the reader streams `(offset, length, digest, event)`
 * records through {@link makeExplanationFold} in file order and asks for a model whenever it
 * wants one; nothing is stored. Each step {@link evolve} first reads every field it uses
 * (`internal/readRecord.ts`) and only then applies the record to the {@link ExplanationState}, so
 * a record whose used fields have the wrong shape is counted as malformed and leaves no trace.
 *
 * **Gotchas**: `evolve` updates the state in place and returns it (the fold owns its state; a
 * caller that keeps an old reference sees the new state). Tool outputs fold into the invocation
 * named by their `call_id`. One exception to "no trace": a `delegated_agent_status` harness
 * record with a bad `status`/`task_id`/`session_id` still notes its agent (or counts as legacy),
 * and one with a bad `exit_code` also records the delegation as in progress — what the fold has
 * always done, kept so that explanations stay byte-identical.
 */
import { LABEL_LIMIT, publicIdentity, publicPath, publicText, RATIONALE_LIMIT } from "../contract/Redaction.ts"
import { isKnownEventType } from "../contract/ThreadEvent.ts"
import { assembleExplanation } from "./ExplanationAssembly.ts"
import type { DecisionEntry, ExplanationModel, ExplanationRecord, ExplanationScope } from "./ExplanationModel.ts"
import { Bad } from "./internal/eventAccess.ts"
import type { ExplanationState, OutputState, Where } from "./internal/explanationState.ts"
import {
  evidence,
  fact,
  identity,
  inCurrentTask,
  initialState,
  noteAgent,
  operation,
  setStatus,
  settle,
  taskState,
  whereOf
} from "./internal/explanationState.ts"
import { addUsage, delegationStatus, execStatus, firstLine, requestText, toolStatus } from "./internal/foldValues.ts"
import type { ItemFields, ItemPhase, RecordFields } from "./internal/readRecord.ts"
import { readRecord } from "./internal/readRecord.ts"
import { parseDiff } from "./internal/unifiedDiff.ts"

const applyToolOutput = (
  s: ExplanationState,
  r: ExplanationRecord,
  completed: boolean,
  item: Extract<ItemFields, { readonly type: "tool_output" }>
): void => {
  const { callId, exit, id, status } = item
  const where = whereOf(s, item.ctx)
  const op = operation(s, r, "tool", where, callId, "", item.ctx?.activity)
  if (op.label.length === 0) op.label = publicText(`tool ${callId}`)
  const ev = evidence(s, r, id)
  const out: OutputState = op.output ?? {
    startSeq: s.seq,
    passed: undefined,
    failed: undefined,
    completed: false,
    exitCode: null,
    lastEvidence: ev
  }
  op.output = out
  out.lastEvidence = ev
  if (exit !== undefined) out.exitCode = exit
  if (completed && status === "completed") {
    out.completed = true
    if (exit === 0) out.passed = ev
  }
  if (status === "failed") out.failed = ev
  if (exit !== undefined) {
    op.exitCode = exit
    op.hasExitCode = true
  }
  if (!op.terminal) {
    if (status === "failed") op.status = "failed"
    else if (completed && status === "completed" && op.status === "in progress") {
      op.status = exit === undefined || exit === 0 ? "completed" : "failed"
    }
  }
}

const applyItem = (s: ExplanationState, r: ExplanationRecord, phase: ItemPhase, item: ItemFields): void => {
  const completed = phase === "completed"
  const { ctx, id } = item
  switch (item.type) {
    case "agent_message":
    case "reasoning": {
      whereOf(s, ctx)
      return
    }
    case "plan": {
      const where = whereOf(s, ctx)
      const key = identity(where, id)
      const label = publicText(firstLine(item.text) || "(empty plan)")
      const known = s.planItems.get(key)
      const entry = fact("plan", `plan: ${label}`, completed ? "completed" : "in progress", evidence(s, r, id), where)
      if (known === undefined) s.planItems.set(key, { seq: s.seq, entry })
      else if (completed || known.entry.status !== "completed") known.entry = entry
      return
    }
    case "decision": {
      const where = whereOf(s, ctx)
      const key = identity(where, id)
      const entry: DecisionEntry = {
        fact: fact("decision", publicText(item.summary), "agent-reported", evidence(s, r, id), where),
        rationale: publicText(item.rationale, RATIONALE_LIMIT),
        alternatives: item.alternatives.filter((a): a is string => typeof a === "string").slice(0, 3).map((a) =>
          publicText(a)
        ),
        evidence_ids: item.evidenceIds.filter((a): a is string => typeof a === "string").slice(0, 8).map(
          publicIdentity
        )
      }
      const known = s.decisions.get(key)
      if (known === undefined) s.decisions.set(key, { key, seq: s.seq, entry })
      else known.entry = entry
      return
    }
    case "command_execution": {
      const { exit, status } = item
      const op = operation(s, r, "command", whereOf(s, ctx), id, item.command, ctx?.activity)
      settle(s, op, r, completed, execStatus(status), `${status}:${exit ?? ""}`, exit)
      return
    }
    case "tool_invocation": {
      const { label, name, outcome, status } = item
      const where = whereOf(s, ctx)
      // A later record without the arguments keeps the subject an earlier one named.
      const keep = label === name && s.operations.get(identity(where, id))?.rawLabel.startsWith(`${name} `) === true
      const op = operation(s, r, "tool", where, id, keep ? "" : label, ctx?.activity)
      settle(s, op, r, completed, toolStatus(status, outcome), `${status}:${outcome ?? ""}`, undefined)
      return
    }
    case "tool_output":
      return applyToolOutput(s, r, completed, item)
    case "file_change": {
      const { diff, paths, status } = item
      const label = paths.length === 0 ? "(no paths)" : paths.join("\u0000")
      const op = operation(
        s,
        r,
        "edit",
        whereOf(s, ctx),
        id,
        label,
        ctx?.activity,
        (raw) => publicText(raw.split("\u0000").map((p) => publicPath(p)).join(", "), LABEL_LIMIT)
      )
      // A file_change carries a terminal status on every record; only item.completed settles it.
      const before = op.terminal
      settle(s, op, r, completed, completed ? status : "in progress", `${status}:${diff?.length ?? ""}`, undefined)
      if (!before || op.terminal) {
        op.paths = paths
        op.diffs = diff === undefined ? undefined : parseDiff(diff, paths)
        op.diffMissing = diff === undefined || item.incomplete
      }
      return
    }
    case "mcp_tool_call": {
      const op = operation(s, r, "mcp", whereOf(s, ctx), id, `mcp ${item.name}`, ctx?.activity)
      const status = item.status === "failed" ? "failed" : item.status === "completed" ? "completed" : "in progress"
      settle(s, op, r, completed, status, status, undefined)
      return
    }
    case "web_search": {
      const op = operation(s, r, "web_search", whereOf(s, ctx), id, `search: ${item.query}`, ctx?.activity)
      settle(s, op, r, completed, completed ? "completed" : "in progress", "done", undefined)
      return
    }
    case "harness": {
      const where = whereOf(s, ctx)
      const { delegation } = item
      if (delegation === undefined) return
      if (delegation === Bad) {
        s.malformed++
        return
      }
      const op = operation(s, r, "delegation", where, id, `delegated agent ${delegation.child}`, ctx?.activity)
      if (delegation.exit === Bad) {
        s.malformed++
        return
      }
      settle(s, op, r, completed, delegationStatus(delegation.status), delegation.status, delegation.exit)
      return
    }
    case "error": {
      const where = whereOf(s, ctx)
      if (completed) {
        s.eventFailures.push({
          seq: s.seq,
          entry: fact("error", publicText(item.message), "error", evidence(s, r, id), where)
        })
      }
      return
    }
  }
}

const applyTurnStarted = (
  s: ExplanationState,
  r: ExplanationRecord,
  fields: Extract<RecordFields, { readonly type: "turn.started" }>
): void => {
  const { breakdown: tb, ctx } = fields
  if (ctx === undefined) s.legacy++
  else {
    noteAgent(s, ctx.actor, ctx.parent)
    s.currentTask = ctx.task
    s.latestTask = ctx.task
    if (ctx.origin === "user") s.latestUserTask = ctx.task
  }
  setStatus(s, "in progress")
  const where: Where = {
    task: s.currentTask ?? null,
    actor: ctx?.actor ?? null,
    parent: ctx?.parent ?? null,
    timestamp: ctx?.timestamp ?? null
  }
  const ev = evidence(s, r, ctx?.turn ?? null)
  s.turns.push({ seq: s.seq, entry: fact("turn", `turn ${s.turns.length + 1}`, "in progress", ev, where) })
  if (ctx?.origin === "user") {
    s.goals.push({
      seq: s.seq,
      entry: fact("goal", publicText(requestText(ctx.goal ?? "(goal not recorded)")), "recorded", ev, where)
    })
  } else if (ctx?.origin === "correction") {
    s.plans.push({
      seq: s.seq,
      entry: fact("plan", publicText(`correction: ${ctx.goal ?? "(no text)"}`), "recorded", ev, where)
    })
  }
  if (tb !== undefined) {
    const breakdown: Record<string, number> = {}
    for (const [k, v] of Object.entries(tb)) if (typeof v === "number") breakdown[k] = v
    s.breakdowns.push({
      seq: s.seq,
      entry: { fact: fact("turn", `turn ${s.turns.length} token breakdown`, "recorded", ev, where), breakdown }
    })
  }
}

const applyTurnEnd = (
  s: ExplanationState,
  r: ExplanationRecord,
  fields: Extract<RecordFields, { readonly type: "turn.ended" }>
): void => {
  const { failure, status, usage } = fields
  setStatus(s, status)
  const lastTurn = s.turns[s.turns.length - 1]
  if (lastTurn !== undefined && lastTurn.entry.status === "in progress") {
    s.turns[s.turns.length - 1] = { seq: lastTurn.seq, entry: { ...lastTurn.entry, status } }
  }
  s.sessionUsage = addUsage(s.sessionUsage, usage)
  if (s.currentTask !== undefined) {
    const t = taskState(s, s.currentTask)
    t.usage = addUsage(t.usage, usage)
  }
  if (failure !== undefined) {
    s.eventFailures.push({
      seq: s.seq,
      entry: fact(
        "turn",
        publicText(`${failure.kind}: ${failure.message}`),
        failure.kind === "turn blocked" ? "blocked" : "failed",
        evidence(s, r, null),
        inCurrentTask(s)
      )
    })
  }
}

/** Applies the fields read from one valid record. */
const apply = (s: ExplanationState, r: ExplanationRecord, fields: RecordFields): void => {
  switch (fields.type) {
    case "turn.started":
      return applyTurnStarted(s, r, fields)
    case "turn.ended":
      return applyTurnEnd(s, r, fields)
    case "thread.completed": {
      if (fields.cost !== undefined) s.costUsd = fields.cost
      const { subtype } = fields
      s.sessionStatus = subtype === undefined || subtype === "success" ? "completed" : `completed (${subtype})`
      return
    }
    case "error": {
      s.eventFailures.push({
        seq: s.seq,
        entry: fact("error", publicText(fields.message), "error", evidence(s, r, null), inCurrentTask(s))
      })
      return
    }
    case "item":
      return applyItem(s, r, fields.phase, fields.item)
    case "interjected": {
      const label = publicText(`correction: ${fields.text ?? "(interjection without text)"}`)
      s.plans.push({ seq: s.seq, entry: fact("plan", label, "recorded", evidence(s, r, null), inCurrentTask(s)) })
      return
    }
    case "plan.approval.requested": {
      const { file } = fields
      const label = publicText(`plan approval requested${file === undefined ? "" : ` (${file})`}`)
      s.plans.push({ seq: s.seq, entry: fact("plan", label, "pending", evidence(s, r, null), inCurrentTask(s)) })
      return
    }
    case "plan.approval.resolved": {
      const { automatic, decision } = fields
      const label = publicText(`plan approval: ${decision}${automatic ? " (automatic)" : ""}`)
      s.plans.push({ seq: s.seq, entry: fact("plan", label, decision, evidence(s, r, null), inCurrentTask(s)) })
      return
    }
    case "other":
      if (!isKnownEventType(fields.eventType)) s.unknown++
      return
  }
}

export type {
  /** Everything the fold remembers (one named field per counter, index and fact list); see `internal/explanationState.ts`. */
  ExplanationState
} from "./internal/explanationState.ts"
export {
  /** The state of a fold that has been fed nothing. */
  initialState
} from "./internal/explanationState.ts"

/**
 * One step of the fold: numbers the record, reads every field it uses, and either counts it as
 * malformed (state otherwise untouched) or applies it. Updates `state` in place and returns it.
 */
export const evolve = (state: ExplanationState, record: ExplanationRecord): ExplanationState => {
  state.seq++
  const fields = record.event === undefined ? Bad : readRecord(record.event)
  if (fields === Bad) state.malformed++
  else apply(state, record, fields)
  return state
}

/**
 * The explanation reducer: feed retained records in file order with {@link ExplanationFold.add},
 * then read a model at any point with {@link ExplanationFold.model}. Adding more records later
 * continues where it stopped (the incremental reader relies on this: a model after `add(a); add(b)`
 * equals one from a fresh fold fed `a` and `b`).
 */
export interface ExplanationFold {
  /** Reduces one record. */
  readonly add: (record: ExplanationRecord) => void
  /** Records reduced so far. */
  readonly records: () => number
  /** The model over everything added so far, for a scope. */
  readonly model: (options: {
    readonly scope: ExplanationScope
    readonly revision: string
    readonly evictedTurns: number
  }) => ExplanationModel
}

/** A new, empty explanation fold for the session whose records it will be fed. */
export const makeExplanationFold = (sessionId: string): ExplanationFold => {
  const state = initialState(sessionId)
  return {
    add: (record) => {
      evolve(state, record)
    },
    records: () => state.seq,
    model: (options) => assembleExplanation(state, options)
  }
}
