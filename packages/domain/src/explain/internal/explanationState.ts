/**
 * The explanation fold's state and the primitive updates the fold applies to it: one named
 * field per thing the fold remembers (counters, the current and latest tasks, statuses, usage,
 * operations by identity, facts in recorded order, agents), and the operations that keep its
 * invariants (operation identity, terminal states, agent ancestry, evidence). Shared by the fold
 * (`ExplanationFold.ts`), which writes it, and the assembly (`ExplanationAssembly.ts`), which
 * only reads it.
 *
 * **Gotchas**: the state is mutable and owned by one fold; the updates here change it in place.
 * Identities are `(task, actor, item id)`; a terminal state comes only from `item.completed` and
 * is never regressed by later updates.
 */
import { publicIdentity, publicText } from "../../contract/Redaction.ts"
import type { UsageTotals } from "../../contract/Usage.ts"
import type {
  AgentNode,
  DecisionEntry,
  EvidenceRef,
  ExplanationEntry,
  ExplanationRecord,
  OperationKind,
  TokenBreakdownEntry
} from "../ExplanationModel.ts"
import type { Context } from "./eventAccess.ts"
import type { PathDiff } from "./unifiedDiff.ts"

/** Where a fact happened: its task, actor, the actor's parent and the record's timestamp. */
export interface Where {
  readonly task: string | null
  readonly actor: string | null
  readonly parent: string | null
  readonly timestamp: string | null
}

/** What the outputs of one tool invocation recorded. */
export interface OutputState {
  startSeq: number
  passed: EvidenceRef | undefined
  failed: EvidenceRef | undefined
  completed: boolean
  exitCode: number | null
  lastEvidence: EvidenceRef
}

/** One recorded operation (command, tool, MCP call, search, delegation, edit), merged over its records. */
export interface Operation {
  readonly key: string
  readonly seq: number
  readonly kind: OperationKind
  readonly itemId: string
  where: Where
  rawLabel: string
  label: string
  activity: Context["activity"]
  /** in progress | completed | failed | denied | cancelled */
  status: string
  terminal: boolean
  terminalSignature: string | undefined
  evidence: EvidenceRef
  readonly firstEvidence: EvidenceRef
  exitCode: number | null
  hasExitCode: boolean
  output: OutputState | undefined
  paths: ReadonlyArray<string>
  diffs: Map<string, PathDiff> | undefined
  diffMissing: boolean
}

/** A fact with the sequence number of the record that produced it (records count from 1). */
export interface Fact {
  readonly seq: number
  readonly entry: ExplanationEntry
}

/** A plan item, replaced by its later records. */
export interface PlanItemState {
  readonly seq: number
  entry: ExplanationEntry
}

/** A decision, replaced by its later records. */
export interface DecisionState {
  readonly key: string
  readonly seq: number
  entry: DecisionEntry
}

/** A token breakdown with the sequence number of its `turn.started`. */
export interface BreakdownFact {
  readonly seq: number
  readonly entry: TokenBreakdownEntry
}

/** The status and usage of one task. */
export interface TaskState {
  status: string
  usage: UsageTotals | undefined
}

/** Everything the explanation fold remembers of the records it has been fed. */
export interface ExplanationState {
  readonly sessionId: string
  /** Records reduced so far (malformed ones included); the sequence number of the latest one. */
  seq: number
  malformed: number
  unknown: number
  legacy: number
  /** The task of the latest `turn.started` with a context (records without one belong to it). */
  currentTask: string | undefined
  latestUserTask: string | undefined
  latestTask: string | undefined
  sessionStatus: string
  costUsd: number | null
  sessionUsage: UsageTotals | undefined
  readonly tasks: Map<string, TaskState>
  /** Operations by identity (see {@link identity}). */
  readonly operations: Map<string, Operation>
  /** Operations in the order of their first record. */
  readonly order: Array<Operation>
  readonly goals: Array<Fact>
  readonly turns: Array<Fact>
  readonly eventFailures: Array<Fact>
  readonly plans: Array<Fact>
  readonly planItems: Map<string, PlanItemState>
  readonly decisions: Map<string, DecisionState>
  readonly breakdowns: Array<BreakdownFact>
  readonly agents: Map<string, AgentNode>
  /** Redacted item ids by raw id (item ids repeat across an item's records; bounded cache). */
  readonly identities: Map<string, string>
}

/** The state of a fold that has been fed nothing. */
export const initialState = (sessionId: string): ExplanationState => ({
  sessionId,
  seq: 0,
  malformed: 0,
  unknown: 0,
  legacy: 0,
  currentTask: undefined,
  latestUserTask: undefined,
  latestTask: undefined,
  sessionStatus: "unavailable",
  costUsd: null,
  sessionUsage: undefined,
  tasks: new Map(),
  operations: new Map(),
  order: [],
  goals: [],
  turns: [],
  eventFailures: [],
  plans: [],
  planItems: new Map(),
  decisions: new Map(),
  breakdowns: [],
  agents: new Map(),
  identities: new Map()
})

const shownIdentity = (s: ExplanationState, id: string): string => {
  const known = s.identities.get(id)
  if (known !== undefined) return known
  if (s.identities.size >= 4096) s.identities.clear()
  const shown = publicIdentity(id)
  s.identities.set(id, shown)
  return shown
}

/** The evidence of a record (its digest is computed here), naming an item when there is one. */
export const evidence = (s: ExplanationState, r: ExplanationRecord, itemId: string | null): EvidenceRef => ({
  session_id: s.sessionId,
  offset: r.offset,
  length: r.length,
  digest: r.digest(),
  item_id: itemId === null ? null : shownIdentity(s, itemId)
})

/** The state of a task, created on first use. */
export const taskState = (s: ExplanationState, task: string): TaskState => {
  let t = s.tasks.get(task)
  if (t === undefined) {
    t = { status: "unavailable", usage: undefined }
    s.tasks.set(task, t)
  }
  return t
}

/** Sets the session's status and the current task's. */
export const setStatus = (s: ExplanationState, status: string): void => {
  s.sessionStatus = status
  if (s.currentTask !== undefined) taskState(s, s.currentTask).status = status
}

/** Records an agent; a later record may add the parent an earlier one lacked. */
export const noteAgent = (s: ExplanationState, actor: string, parent: string | undefined): void => {
  const known = s.agents.get(actor)
  if (known === undefined || (known.parent_actor_id === null && parent !== undefined)) {
    s.agents.set(actor, { actor_id: actor, parent_actor_id: parent ?? null })
  }
}

/** Where a record without its own context happened: the current task, nobody, no time. */
export const inCurrentTask = (s: ExplanationState): Where => ({
  task: s.currentTask ?? null,
  actor: null,
  parent: null,
  timestamp: null
})

/** Where an item happened; a legacy item (no context) is counted and placed in the current task. */
export const whereOf = (s: ExplanationState, ctx: Context | undefined): Where => {
  if (ctx === undefined) {
    s.legacy++
    return inCurrentTask(s)
  }
  noteAgent(s, ctx.actor, ctx.parent)
  return { task: ctx.task, actor: ctx.actor, parent: ctx.parent ?? null, timestamp: ctx.timestamp }
}

/** A model entry. */
export const fact = (
  kind: OperationKind,
  label: string,
  status: string,
  ev: EvidenceRef,
  where: Where,
  path: string | null = null,
  line: number | null = null
): ExplanationEntry => ({
  kind,
  label,
  status,
  evidence: ev,
  task_id: where.task,
  actor_id: where.actor,
  parent_actor_id: where.parent,
  timestamp: where.timestamp,
  path,
  line
})

/** The identity of an item: `(task, actor, item id)`. */
export const identity = (where: Where, id: string): string => `${where.task ?? ""}\u0000${where.actor ?? ""}\u0000${id}`

/**
 * The operation of an item, created at its first record (sequence number and first evidence are
 * that record's); a later record may set the activity and change the label.
 */
export const operation = (
  s: ExplanationState,
  r: ExplanationRecord,
  kind: OperationKind,
  where: Where,
  id: string,
  rawLabel: string,
  activity: Operation["activity"],
  shown: (raw: string) => string = publicText
): Operation => {
  const key = identity(where, id)
  const known = s.operations.get(key)
  if (known !== undefined) {
    if (activity !== undefined) known.activity = activity
    // Labels are redacted only when they change (started/completed records repeat them).
    if (rawLabel.length > 0 && rawLabel !== known.rawLabel) {
      known.rawLabel = rawLabel
      known.label = shown(rawLabel)
    }
    return known
  }
  const label = rawLabel.length > 0 ? shown(rawLabel) : rawLabel
  const ev = evidence(s, r, id)
  const op: Operation = {
    key,
    seq: s.seq,
    kind,
    itemId: id,
    where,
    rawLabel,
    label,
    activity,
    status: "in progress",
    terminal: false,
    terminalSignature: undefined,
    evidence: ev,
    firstEvidence: ev,
    exitCode: null,
    hasExitCode: false,
    output: undefined,
    paths: [],
    diffs: undefined,
    diffMissing: false
  }
  s.operations.set(key, op)
  s.order.push(op)
  return op
}

/**
 * Applies a status from one record, honouring the terminal rules: only a completed record makes
 * it terminal, and a terminal status changes only for a completed record with another signature.
 */
export const settle = (
  s: ExplanationState,
  op: Operation,
  r: ExplanationRecord,
  completed: boolean,
  status: string,
  signature: string,
  exitCode: number | undefined
): void => {
  if (op.terminal && !completed) return
  if (op.terminal && op.terminalSignature === signature) return
  op.status = status
  op.terminal = completed
  op.terminalSignature = completed ? signature : undefined
  if (exitCode !== undefined) {
    op.exitCode = exitCode
    op.hasExitCode = true
  }
  if (completed) op.evidence = evidence(s, r, op.itemId)
}
