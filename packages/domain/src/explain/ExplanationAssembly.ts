/**
 * Model assembly: the {@link ExplanationModel} of a fold's state for a scope — actions, changes
 * with their first changed line, verification and its freshness, failures in recorded order,
 * review priorities, the action/file/agent graph, usage, cost and completeness warnings. Kept
 * apart from the fold because it runs once per question, not once per record, and only reads.
 *
 * **Gotchas**: "task" scope is the latest user task (or the latest task when no turn came from
 * the user); a verification is fresh only when it passed and started after every mutation
 * attempt in scope; review priorities are an inspection order, not bug claims. An operation
 * without a recorded `activity` is a check when the classifier (`VerificationCommand.ts`)
 * recognises its command line; that is decided here, once per model, not per record, so the
 * fold's cost per line is unchanged.
 */
import { publicIdentity, publicPath } from "../contract/Redaction.ts"
import type {
  ExplanationEntry,
  ExplanationModel,
  ExplanationScope,
  GraphEdge,
  ReviewSignal,
  VerificationEntry,
  VerificationStatus
} from "./ExplanationModel.ts"
import type { ExplanationState, Fact, Operation } from "./internal/explanationState.ts"
import { fact } from "./internal/explanationState.ts"
import type { PathDiff } from "./internal/unifiedDiff.ts"
import { isVerificationCommand } from "./VerificationCommand.ts"

/** `n noun` with the noun in the plural unless n is 1 (warnings read as sentences, unescaped). */
const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? "" : "s"}`

const HIGH_RISK =
  /(secur|permission|auth|login|password|credential|secret|token|crypt|exec|spawn|shell|sandbox|storage|persist|database|\bdb\b|migration|schema|sql|lock|package\.json|package-lock\.json|cargo\.(?:toml|lock)|go\.(?:mod|sum)|requirements\.txt|pyproject\.toml|gemfile|pom\.xml|build\.gradle|yarn\.lock|pnpm-lock)/iu

/** Operations whose failure is a failure, and which count as recorded operations. */
const isFailedStatus = (s: string) => s === "failed" || s === "denied"

/** What a model is asked for: its scope, the revision of the bytes read and how many turns were evicted. */
export interface AssemblyOptions {
  readonly scope: ExplanationScope
  readonly revision: string
  readonly evictedTurns: number
}

/** A changed path: its first entry and what its diffs say (the first diff recorded for it). */
interface ChangedPath {
  diff: PathDiff | undefined
  readonly entry: ExplanationEntry
}

const entryOf = (op: Operation, status: string = op.status): ExplanationEntry =>
  fact(op.kind, op.label, status, op.evidence, op.where)

const isSuccessfulEdit = (op: Operation): boolean => op.kind === "edit" && op.terminal && op.status === "completed"

/** The sequence number of the last mutation attempt (any file change, any operation recorded as a mutation), or -1. */
const lastMutationOf = (ops: ReadonlyArray<Operation>): number => {
  let lastMutation = -1
  for (const op of ops) {
    if (op.kind === "edit" || op.activity === "mutation") lastMutation = Math.max(lastMutation, op.seq)
  }
  return lastMutation
}

/** Changed paths in order of their first successful edit, and how many of those edits lack a (complete) diff. */
const changesOf = (successfulEdits: ReadonlyArray<Operation>) => {
  const changes: Array<ExplanationEntry> = []
  const changeDiffs = new Map<string, ChangedPath>()
  let missingDiffs = 0
  for (const op of successfulEdits) {
    if (op.diffMissing) missingDiffs++
    for (const p of op.paths) {
      const diff = op.diffs?.get(p)
      const known = changeDiffs.get(p)
      if (known !== undefined) {
        if (known.diff === undefined && diff !== undefined) known.diff = diff
        continue
      }
      const entry = fact("edit", publicPath(p), "completed", op.evidence, op.where, publicPath(p), diff?.line ?? null)
      changes.push(entry)
      changeDiffs.set(p, { diff, entry })
    }
  }
  return { changes, changeDiffs, missingDiffs }
}

/** Tools that run a shell command line (their label is `<tool> <command>`, see `toolLabel`). */
const SHELL_TOOLS: ReadonlySet<string> = new Set([
  "Bash",
  "bash",
  "shell",
  "local_shell",
  "exec_command",
  "run_shell_command",
  "execute_command",
  "run_terminal_cmd"
])

/**
 * Whether an operation is a verification check: its recorded `activity` when there is one (an
 * explicit label always wins), else what the classifier reads from its command line — a
 * command's own, or a shell tool's `command` argument.
 */
const isVerification = (op: Operation): boolean => {
  if (op.activity !== undefined) return op.activity === "verification"
  if (op.kind === "command") return isVerificationCommand(op.rawLabel)
  if (op.kind !== "tool") return false
  const space = op.rawLabel.indexOf(" ")
  return space > 0 && SHELL_TOOLS.has(op.rawLabel.slice(0, space)) &&
    isVerificationCommand(op.rawLabel.slice(space + 1))
}

/** The verification checks in scope, each fresh when it passed and started after the last mutation. */
const verificationOf = (ops: ReadonlyArray<Operation>, lastMutation: number): Array<VerificationEntry> => {
  const verification: Array<VerificationEntry> = []
  for (const op of ops) {
    if (!isVerification(op)) continue
    let status: VerificationStatus
    let ev = op.evidence
    let start = op.seq
    if (op.kind === "tool") {
      const out = op.output
      if (out !== undefined) start = out.startSeq
      if (out?.passed !== undefined) {
        status = "passed"
        ev = out.passed
      } else if (op.status === "cancelled") status = "cancelled"
      else if (out?.failed !== undefined || op.status === "failed" || op.status === "denied") {
        status = "failed or denied"
        ev = out?.failed ?? op.evidence
      } else if (out === undefined) status = "unconfirmed"
      else if (!out.completed) status = "pending"
      else status = out.exitCode === null ? "unconfirmed" : "failed or denied"
    } else {
      if (op.status === "cancelled") status = "cancelled"
      // The reference labels a failed command `failed`; `failed or denied` is for tool invocations.
      else if (op.status === "failed" || op.status === "denied") status = "failed"
      else if (!op.terminal) status = "pending"
      else if (!op.hasExitCode) status = "unconfirmed"
      else status = op.exitCode === 0 ? "passed" : "failed"
    }
    verification.push({
      fact: fact(op.kind, op.label, status, ev, op.where),
      status,
      exit_code: op.exitCode,
      fresh: status === "passed" && start > lastMutation
    })
  }
  return verification
}

/** Where to look first: risky or large changes, public API, repeated failures, unverified last mutation. */
const reviewSignalsOf = (
  ops: ReadonlyArray<Operation>,
  changeDiffs: ReadonlyMap<string, ChangedPath>,
  failures: ReadonlyArray<ExplanationEntry>,
  verification: ReadonlyArray<VerificationEntry>,
  lastMutation: number
): Array<ReviewSignal> => {
  const signals: Array<{ seq: number; signal: ReviewSignal }> = []
  const seen = new Set<string>()
  const signal = (s: number, priority: "high" | "medium", reason: string, f: ExplanationEntry) => {
    const key = `${f.path ?? f.label}\u0000${reason}`
    if (seen.has(key)) return
    seen.add(key)
    signals.push({ seq: s, signal: { priority, reason, fact: f } })
  }
  for (const [p, { diff, entry }] of changeDiffs) {
    const s = entry.evidence.offset
    if (HIGH_RISK.test(p)) {
      signal(s, "high", "Touches security, execution, persistence, schema or dependencies", entry)
    }
    if (diff?.publicApi === true) signal(s, "medium", "Public API", entry)
    if (diff !== undefined && diff.changed >= 200) signal(s, "medium", "Large diff (≥ 200 changed lines)", entry)
  }
  const knownFailures = failures.length
  const lastFailure = failures[failures.length - 1]
  if (knownFailures >= 2 && lastFailure !== undefined) {
    signal(lastFailure.evidence.offset, "medium", "Repeated recorded failures", lastFailure)
  }
  const lastMutationOp = ops.filter((op) => op.seq === lastMutation)[0]
  if (lastMutationOp !== undefined && !verification.some((v) => v.fresh)) {
    signal(
      lastMutationOp.evidence.offset,
      "medium",
      "No passing verification after the last mutation",
      entryOf(lastMutationOp)
    )
  }
  signals.sort((a, b) =>
    a.signal.priority === b.signal.priority ? a.seq - b.seq : a.signal.priority === "high" ? -1 : 1
  )
  return signals.map((s) => s.signal)
}

/** The action/file graph (operations in recorded order, the files they changed) and the agents with their delegation edges. */
const graphOf = (ops: ReadonlyArray<Operation>, agents: ExplanationState["agents"]) => {
  const nodeOf = (op: Operation) =>
    `event ${op.firstEvidence.offset}:${op.firstEvidence.digest.slice(0, 12)} ${publicIdentity(op.where.task ?? "-")}/${
      publicIdentity(op.where.actor ?? "-")
    }/${publicIdentity(op.itemId)}`
  const graph: Array<GraphEdge> = []
  let previous: string | undefined
  for (const op of ops) {
    const node = nodeOf(op)
    if (previous !== undefined && previous !== node) {
      graph.push({ from: previous, to: node, relation: "recorded next" })
    }
    previous = node
    if (isSuccessfulEdit(op)) {
      for (const p of op.paths) graph.push({ from: node, to: publicPath(p), relation: "changed file" })
    }
  }
  const agentList = [...agents.values()].map((a) => ({
    actor_id: publicIdentity(a.actor_id),
    parent_actor_id: a.parent_actor_id === null ? null : publicIdentity(a.parent_actor_id)
  }))
  for (const a of agentList) {
    if (a.parent_actor_id !== null) {
      graph.push({ from: a.parent_actor_id, to: a.actor_id, relation: "delegated agent" })
    }
  }
  const missingAncestry = agentList.some((a) => a.parent_actor_id !== null && !agents.has(a.parent_actor_id))
  return { graph, agentList, missingAncestry }
}

const bySeq = <A extends { readonly seq: number }>(xs: ReadonlyArray<A>) => [...xs].sort((a, b) => a.seq - b.seq)

/** The model of everything a fold's state has seen, for a scope (reads the state, never changes it). */
export const assembleExplanation = (
  state: ExplanationState,
  { evictedTurns, revision, scope }: AssemblyOptions
): ExplanationModel => {
  const taskId = scope === "session" ? null : state.latestUserTask ?? state.latestTask ?? null
  const inScope = (where: { readonly task_id: string | null }) => taskId === null || where.task_id === taskId
  const ops = state.order.filter((op) => taskId === null || op.where.task === taskId)
  const warnings: Array<string> = []
  const lastMutation = lastMutationOf(ops)

  const successfulEdits = ops.filter(isSuccessfulEdit)
  const { changeDiffs, changes, missingDiffs } = changesOf(successfulEdits)
  if (missingDiffs > 0) warnings.push(`diff unavailable for ${count(missingDiffs, "recorded file change")}`)

  const verification = verificationOf(ops, lastMutation)

  const failureFacts: Array<Fact> = []
  for (const op of ops) {
    if (isFailedStatus(op.status)) failureFacts.push({ seq: op.seq, entry: entryOf(op) })
  }
  for (const f of state.eventFailures) if (inScope(f.entry)) failureFacts.push(f)
  failureFacts.sort((a, b) => a.seq - b.seq)
  const failures = failureFacts.map((f) => f.entry)

  const noExit =
    ops.filter((op) => op.kind === "command" && op.terminal && op.status === "completed" && !op.hasExitCode)
      .length
  if (noExit > 0) {
    warnings.push(`${count(noExit, "recorded operation")} ${noExit === 1 ? "has" : "have"} no exit code`)
  }
  const pending = ops.filter((op) => !op.terminal && op.status === "in progress").length
  if (pending > 0) {
    warnings.push(`${count(pending, "recorded operation")} ${pending === 1 ? "has" : "have"} no terminal result`)
  }

  const reviewPriorities = reviewSignalsOf(ops, changeDiffs, failures, verification, lastMutation)
  const { agentList, graph, missingAncestry } = graphOf(ops, state.agents)
  if (missingAncestry) warnings.push("some parent agents have no recorded records (missing ancestry)")

  const task = taskId === null ? undefined : state.tasks.get(taskId)
  const usage = scope === "session" ? state.sessionUsage : task?.usage
  return {
    session_id: state.sessionId,
    revision,
    scope,
    task_id: taskId === null ? null : publicIdentity(taskId),
    status: scope === "session" || task === undefined ? state.sessionStatus : task.status,
    goals: state.goals.map((g) => g.entry).filter(inScope),
    turns: state.turns.map((t) => t.entry).filter(inScope),
    actions: ops.filter((op) => op.kind !== "edit").map((op) => entryOf(op)),
    changes,
    edits: ops.filter((op) => op.kind === "edit").map((op) => entryOf(op)),
    edit_operations: successfulEdits.length,
    decisions: bySeq([...state.decisions.values()]).map((d) => d.entry).filter((d) => inScope(d.fact)),
    verification,
    token_breakdowns: state.breakdowns.map((b) => b.entry).filter((b) => inScope(b.fact)),
    failures,
    review_priorities: reviewPriorities,
    plan_evolution: bySeq([...state.plans, ...state.planItems.values()]).map((p) => p.entry).filter(inScope),
    agents: agentList,
    graph,
    usage: usage ?? null,
    cost_usd: scope === "session" ? state.costUsd : null,
    completeness: {
      malformed_records: state.malformed,
      unknown_records: state.unknown,
      legacy_records: state.legacy,
      evicted_turns: evictedTurns,
      warnings
    }
  }
}
