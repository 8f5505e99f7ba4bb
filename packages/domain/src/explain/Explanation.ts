/**
 * The explanation model and its reducer (docs/explain.md): what the agent did, with evidence —
 * goals, actions, file changes, failures, decisions, verification with freshness, plan
 * evolution, review priorities, the action/file graph, usage and cost, and how complete the
 * record is. Pure: the reader streams `(offset, length, digest, event)` records through
 * {@link makeExplanationFold} and asks for a model whenever it wants one; nothing is stored.
 *
 * The fold reads the parsed JSON of each event and checks only the fields it uses (a record
 * whose used fields have the wrong shape is counted as malformed), which is what keeps an
 * explanation close to the cost of a rescan instead of a full Schema decode per line.
 *
 * **Gotchas**: identities are `(task, actor, item id)`; terminal states come only from
 * `item.completed` and are never regressed by later updates; tool outputs fold into the
 * invocation named by their `call_id`.
 */
import { Result } from "effect"
import { LABEL_LIMIT, publicIdentity, publicPath, publicText, RATIONALE_LIMIT } from "../contract/Redaction.ts"
import { isKnownEventType } from "../contract/ThreadEvent.ts"
import type { UsageTotals } from "../contract/Usage.ts"
import { isJsonObject } from "../internal/jsonText.ts"

/**
 * IDE-context preambles some agents prepend to the user's prompt (Codex's "# Context from my
 * IDE setup: … ## My request for Codex:"): the goal is the request after the marker, not the
 * list of open tabs before it. A prompt without the marker is returned unchanged.
 */
const REQUEST_MARKER = /^\s*#\s*Context from my IDE setup:[\s\S]*?##\s*My request for Codex:\s*/u

/** `n noun` with the noun in the plural unless n is 1 (warnings read as sentences, unescaped). */
const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? "" : "s"}`

const requestText = (prompt: string): string => {
  const match = REQUEST_MARKER.exec(prompt)
  if (match === null) return prompt
  const rest = prompt.slice(match[0].length).replace(/\s+/gu, " ").trim()
  return rest.length === 0 ? prompt : rest
}

/** A JSON object as parsed. */
type Json = { readonly [key: string]: unknown }

/** Which part of a session an explanation covers: the latest user task, or everything. */
export type ExplanationScope = "task" | "session"

/** Where a fact was recorded: one line of `events.jsonl`, bound by its byte span and SHA-256. */
export interface EvidenceRef {
  readonly session_id: string
  readonly offset: number
  readonly length: number
  readonly digest: string
  readonly item_id: string | null
}

/** The kinds of recorded operation an explanation lists. */
export type OperationKind =
  | "command"
  | "tool"
  | "mcp"
  | "web_search"
  | "delegation"
  | "edit"
  | "turn"
  | "goal"
  | "plan"
  | "decision"
  | "error"

/** One recorded fact with its evidence; optional fields are `null` when not recorded. */
export interface ExplanationEntry {
  readonly kind: OperationKind
  readonly label: string
  readonly status: string
  readonly evidence: EvidenceRef
  readonly task_id: string | null
  readonly actor_id: string | null
  readonly parent_actor_id: string | null
  readonly timestamp: string | null
  readonly path: string | null
  readonly line: number | null
}

/** How a verification check ended. */
export type VerificationStatus = "passed" | "failed or denied" | "unconfirmed" | "pending" | "cancelled"

/** A verification check: its status, recorded exit code and whether it ran after every mutation attempt. */
export interface VerificationEntry {
  readonly fact: ExplanationEntry
  readonly status: VerificationStatus
  readonly exit_code: number | null
  readonly fresh: boolean
}

/** A decision the agent recorded, with its public rationale (never reconstructed from reasoning). */
export interface DecisionEntry {
  readonly fact: ExplanationEntry
  readonly rationale: string
  readonly alternatives: ReadonlyArray<string>
  readonly evidence_ids: ReadonlyArray<string>
}

/** The recorded token breakdown of one turn, copied verbatim. */
export interface TokenBreakdownEntry {
  readonly fact: ExplanationEntry
  readonly breakdown: { readonly [key: string]: number }
}

/** Where to look first (an inspection order, not a bug claim). */
export interface ReviewSignal {
  readonly priority: "high" | "medium"
  readonly reason: string
  readonly fact: ExplanationEntry
}

/** An edge of the action/file graph. */
export interface GraphEdge {
  readonly from: string
  readonly to: string
  readonly relation: "recorded next" | "changed file" | "delegated agent"
}

/** An agent of the session and who started it. */
export interface AgentNode {
  readonly actor_id: string
  readonly parent_actor_id: string | null
}

/** What the record lacks: bad lines, unknown and legacy records, evicted turns, explicit gaps. */
export interface EvidenceCompleteness {
  readonly malformed_records: number
  readonly unknown_records: number
  readonly legacy_records: number
  readonly evicted_turns: number
  readonly warnings: ReadonlyArray<string>
}

/** An explanation of a session or of its latest task, computed from the retained events only. */
export interface ExplanationModel {
  readonly session_id: string
  /** SHA-256 of the retained bytes the model was computed from. */
  readonly revision: string
  readonly scope: ExplanationScope
  readonly task_id: string | null
  readonly status: string
  readonly goals: ReadonlyArray<ExplanationEntry>
  readonly turns: ReadonlyArray<ExplanationEntry>
  readonly actions: ReadonlyArray<ExplanationEntry>
  readonly changes: ReadonlyArray<ExplanationEntry>
  /** Every file-change operation in scope (successful or not), in recorded order. */
  readonly edits: ReadonlyArray<ExplanationEntry>
  readonly edit_operations: number
  readonly decisions: ReadonlyArray<DecisionEntry>
  readonly verification: ReadonlyArray<VerificationEntry>
  readonly token_breakdowns: ReadonlyArray<TokenBreakdownEntry>
  readonly failures: ReadonlyArray<ExplanationEntry>
  readonly review_priorities: ReadonlyArray<ReviewSignal>
  readonly plan_evolution: ReadonlyArray<ExplanationEntry>
  readonly agents: ReadonlyArray<AgentNode>
  readonly graph: ReadonlyArray<GraphEdge>
  readonly usage: UsageTotals | null
  readonly cost_usd: number | null
  readonly completeness: EvidenceCompleteness
}

/** One retained line as the fold sees it; `event` is the parsed `event` object, or `undefined` for a malformed line. */
export interface ExplanationRecord {
  readonly offset: number
  readonly length: number
  /** The SHA-256 (hex) of the line's bytes; asked for only when the line becomes evidence. */
  readonly digest: () => string
  readonly event: Json | undefined
}

// ---------------------------------------------------------------------------------------------
// Field access: checks only what is read.

class Bad {
  static readonly instance = new Bad()
}

const str = (o: Json, key: string): string | undefined => {
  const v = o[key]
  return typeof v === "string" ? v : undefined
}

const reqStr = (o: Json, key: string): string => {
  const v = o[key]
  if (typeof v !== "string") throw Bad.instance
  return v
}

/** Argument keys whose value says what a tool call acted on (a file, a command, a search). */
const TOOL_SUBJECT_KEYS = ["file_path", "path", "notebook_path", "command", "pattern", "query", "url"] as const

/**
 * A tool call's label: its name, followed by the first subject argument that is a non-empty
 * string ("Read src/a.ts" rather than "Read"), so a list of tool calls says what each touched.
 */
const toolLabel = (name: string, item: Json): string => {
  const args = item["arguments"]
  if (!isJsonObject(args)) return name
  for (const key of TOOL_SUBJECT_KEYS) {
    const v = args[key]
    if (typeof v === "string" && v.trim().length > 0) return `${name} ${v.trim()}`
  }
  return name
}

const optStr = (o: Json, key: string): string | undefined => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== "string") throw Bad.instance
  return v
}

const optInt = (o: Json, key: string): number | undefined => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== "number" || !Number.isInteger(v)) throw Bad.instance
  return v
}

const optObj = (o: Json, key: string): Json | undefined => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  if (!isJsonObject(v)) throw Bad.instance
  return v
}

const oneOf = <A extends string>(o: Json, key: string, values: ReadonlyArray<A>): A => {
  const v = o[key]
  const found = values.find((x) => x === v)
  if (found === undefined) throw Bad.instance
  return found
}

const optOneOf = <A extends string>(o: Json, key: string, values: ReadonlyArray<A>): A | undefined =>
  o[key] === undefined || o[key] === null ? undefined : oneOf(o, key, values)

interface Context {
  readonly task: string | undefined
  readonly turn: string | undefined
  readonly actor: string | undefined
  readonly parent: string | undefined
  readonly timestamp: string | undefined
  readonly activity: "inspection" | "verification" | "mutation" | undefined
  readonly origin?: string | undefined
  readonly goal?: string | undefined
}

const contextOf = (o: Json, withOrigin: boolean): Context | undefined => {
  const c = optObj(o, "context")
  if (c === undefined) return undefined
  return {
    task: reqStr(c, "task_id"),
    turn: reqStr(c, "turn_id"),
    actor: reqStr(c, "actor_id"),
    parent: optStr(c, "parent_actor_id"),
    timestamp: reqStr(c, "timestamp"),
    activity: withOrigin ? undefined : optOneOf(c, "activity", ["inspection", "verification", "mutation"] as const),
    ...(withOrigin
      ? {
        origin: oneOf(c, "origin", ["user", "correction", "plan_approval", "continuation", "retry"] as const),
        goal: optStr(c, "goal")
      }
      : {})
  }
}

const EXEC_STATUS = ["completed", "failed", "in_progress"] as const
const TOOL_OUTCOMES = [
  "success",
  "error",
  "permission_rejected",
  "permission_cancelled",
  "followup",
  "hook_denied",
  "invalid_tool",
  "cancelled"
] as const

// ---------------------------------------------------------------------------------------------
// Unified diffs: the new-side start line of each path's first hunk, changed lines, public API.

interface PathDiff {
  line: number | null
  changed: number
  publicApi: boolean
}

const HUNK = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/u
const PUBLIC_DECL = /^\+\s*(?:export\b|pub\b|pub\(crate\)|public\b)/u

const stripDiffPrefix = (p: string): string => {
  const clean = p.split("\t")[0] ?? p
  return clean.startsWith("a/") || clean.startsWith("b/") ? clean.slice(2) : clean
}

const parseDiff = (diff: string, paths: ReadonlyArray<string>): Map<string, PathDiff> => {
  const out = new Map<string, PathDiff>()
  const single = paths.length === 1 ? paths[0] : undefined
  let current: PathDiff | undefined = single === undefined ? undefined : { line: null, changed: 0, publicApi: false }
  if (single !== undefined && current !== undefined) out.set(single, current)
  let inHunk = false
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++ ")) {
      const target = stripDiffPrefix(line.slice(4).trim())
      const name = target === "/dev/null" ? undefined : paths.find((p) => p === target || p.endsWith(`/${target}`))
        ?? paths.find((p) => target.endsWith(`/${p}`)) ?? target
      if (name !== undefined) {
        current = out.get(name) ?? { line: null, changed: 0, publicApi: false }
        out.set(name, current)
      }
      inHunk = false
      continue
    }
    if (line.startsWith("--- ") && !inHunk) continue
    if (line.startsWith("diff ")) {
      inHunk = false
      continue
    }
    const hunk = HUNK.exec(line)
    if (hunk !== null) {
      inHunk = true
      if (current !== undefined && current.line === null) current.line = Number(hunk[1])
      continue
    }
    if (!inHunk || current === undefined) continue
    if (line.startsWith("+")) {
      current.changed++
      if (!current.publicApi && PUBLIC_DECL.test(line)) current.publicApi = true
    } else if (line.startsWith("-")) {
      current.changed++
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// The fold's state.

interface Where {
  readonly task: string | null
  readonly actor: string | null
  readonly parent: string | null
  readonly timestamp: string | null
}

interface OutputState {
  startSeq: number
  passed: EvidenceRef | undefined
  failed: EvidenceRef | undefined
  completed: boolean
  exitCode: number | null
  lastEvidence: EvidenceRef
}

interface Operation {
  readonly key: string
  readonly seq: number
  readonly kind: OperationKind
  readonly itemId: string
  where: Where
  rawLabel: string
  label: string
  activity: "inspection" | "verification" | "mutation" | undefined
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

interface Fact {
  readonly seq: number
  readonly entry: ExplanationEntry
}

interface DecisionState {
  readonly key: string
  readonly seq: number
  entry: DecisionEntry
}

interface TaskState {
  status: string
  usage: UsageTotals | undefined
}

const addUsage = (a: UsageTotals | undefined, u: Json | undefined): UsageTotals | undefined => {
  if (u === undefined) return a
  const n = (k: string) => {
    const v = u[k]
    return typeof v === "number" && Number.isFinite(v) ? v : 0
  }
  const base = a ?? { input_tokens: 0, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 0 }
  return {
    input_tokens: base.input_tokens + n("input_tokens"),
    cached_input_tokens: base.cached_input_tokens + n("cached_input_tokens"),
    cache_creation_tokens: base.cache_creation_tokens + n("cache_creation_tokens"),
    output_tokens: base.output_tokens + n("output_tokens")
  }
}

const firstLine = (text: string): string => {
  const trimmed = text.trim()
  const nl = trimmed.indexOf("\n")
  return nl === -1 ? trimmed : trimmed.slice(0, nl)
}

const HIGH_RISK =
  /(secur|permission|auth|login|password|credential|secret|token|crypt|exec|spawn|shell|sandbox|storage|persist|database|\bdb\b|migration|schema|sql|lock|package\.json|package-lock\.json|cargo\.(?:toml|lock)|go\.(?:mod|sum)|requirements\.txt|pyproject\.toml|gemfile|pom\.xml|build\.gradle|yarn\.lock|pnpm-lock)/iu

/** Operations whose failure is a failure, and which count as recorded operations. */
const isFailedStatus = (s: string) => s === "failed" || s === "denied"

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
  let seq = 0
  let malformed = 0
  let unknown = 0
  let legacy = 0
  let currentTask: string | undefined
  let latestUserTask: string | undefined
  let latestTask: string | undefined
  let sessionStatus = "unavailable"
  let costUsd: number | null = null
  let sessionUsage: UsageTotals | undefined
  const tasks = new Map<string, TaskState>()
  const operations = new Map<string, Operation>()
  const order: Array<Operation> = []
  const goals: Array<Fact> = []
  const turns: Array<Fact> = []
  const eventFailures: Array<Fact> = []
  const plans: Array<Fact> = []
  const planItems = new Map<string, { seq: number; entry: ExplanationEntry }>()
  const decisions = new Map<string, DecisionState>()
  const breakdowns: Array<{ seq: number; entry: TokenBreakdownEntry }> = []
  const agents = new Map<string, AgentNode>()

  // Item ids repeat across an item's records; their redacted form is computed once (bounded cache).
  const identities = new Map<string, string>()
  const shownIdentity = (id: string): string => {
    const known = identities.get(id)
    if (known !== undefined) return known
    if (identities.size >= 4096) identities.clear()
    const shown = publicIdentity(id)
    identities.set(id, shown)
    return shown
  }

  const evidence = (r: ExplanationRecord, itemId: string | null): EvidenceRef => ({
    session_id: sessionId,
    offset: r.offset,
    length: r.length,
    digest: r.digest(),
    item_id: itemId === null ? null : shownIdentity(itemId)
  })

  const taskState = (task: string): TaskState => {
    let t = tasks.get(task)
    if (t === undefined) {
      t = { status: "unavailable", usage: undefined }
      tasks.set(task, t)
    }
    return t
  }

  const setStatus = (status: string) => {
    sessionStatus = status
    if (currentTask !== undefined) taskState(currentTask).status = status
  }

  const noteAgent = (actor: string | undefined, parent: string | undefined) => {
    if (actor === undefined) return
    const known = agents.get(actor)
    if (known === undefined || (known.parent_actor_id === null && parent !== undefined)) {
      agents.set(actor, { actor_id: actor, parent_actor_id: parent ?? null })
    }
  }

  const whereOf = (ctx: Context | undefined): Where => {
    if (ctx === undefined) {
      legacy++
      return { task: currentTask ?? null, actor: null, parent: null, timestamp: null }
    }
    noteAgent(ctx.actor, ctx.parent)
    return {
      task: ctx.task ?? currentTask ?? null,
      actor: ctx.actor ?? null,
      parent: ctx.parent ?? null,
      timestamp: ctx.timestamp ?? null
    }
  }

  const fact = (
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

  const identity = (where: Where, id: string) => `${where.task ?? ""}\u0000${where.actor ?? ""}\u0000${id}`

  const operation = (
    r: ExplanationRecord,
    kind: OperationKind,
    where: Where,
    id: string,
    rawLabel: string,
    activity: Operation["activity"],
    shown: (raw: string) => string = publicText
  ): Operation => {
    const key = identity(where, id)
    const known = operations.get(key)
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
    const ev = evidence(r, id)
    const op: Operation = {
      key,
      seq,
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
    operations.set(key, op)
    order.push(op)
    return op
  }

  /** Applies a status from one record, honouring the terminal rules. */
  const settle = (
    op: Operation,
    r: ExplanationRecord,
    completed: boolean,
    status: string,
    signature: string,
    exitCode: number | undefined
  ) => {
    if (op.terminal && !completed) return
    if (op.terminal && op.terminalSignature === signature) return
    op.status = status
    op.terminal = completed
    op.terminalSignature = completed ? signature : undefined
    if (exitCode !== undefined) {
      op.exitCode = exitCode
      op.hasExitCode = true
    }
    if (completed) op.evidence = evidence(r, op.itemId)
  }

  const execStatus = (s: "completed" | "failed" | "in_progress") => s === "in_progress" ? "in progress" : s

  const toolStatus = (s: "completed" | "failed" | "in_progress", outcome: string | undefined): string => {
    switch (outcome) {
      case "error":
      case "invalid_tool":
        return "failed"
      case "permission_rejected":
      case "hook_denied":
        return "denied"
      case "cancelled":
      case "permission_cancelled":
        return "cancelled"
      default:
        return execStatus(s)
    }
  }

  const onItem = (r: ExplanationRecord, phase: "started" | "updated" | "completed", item: Json) => {
    const id = reqStr(item, "id")
    const type = reqStr(item, "type")
    const completed = phase === "completed"
    switch (type) {
      case "agent_message":
      case "reasoning": {
        reqStr(item, "text")
        whereOf(contextOf(item, false))
        return
      }
      case "plan": {
        const text = reqStr(item, "text")
        const where = whereOf(contextOf(item, false))
        const key = identity(where, id)
        const label = publicText(firstLine(text) || "(empty plan)")
        const known = planItems.get(key)
        const entry = fact("plan", `plan: ${label}`, completed ? "completed" : "in progress", evidence(r, id), where)
        if (known === undefined) planItems.set(key, { seq, entry })
        else if (completed || known.entry.status !== "completed") known.entry = entry
        return
      }
      case "decision": {
        const summary = reqStr(item, "summary")
        const rationale = reqStr(item, "rationale")
        const alternatives = Array.isArray(item.alternatives) ? item.alternatives : []
        const evidenceIds = Array.isArray(item.evidence_ids) ? item.evidence_ids : []
        const where = whereOf(contextOf(item, false))
        const key = identity(where, id)
        const entry: DecisionEntry = {
          fact: fact("decision", publicText(summary), "agent-reported", evidence(r, id), where),
          rationale: publicText(rationale, RATIONALE_LIMIT),
          alternatives: alternatives.filter((a): a is string => typeof a === "string").slice(0, 3).map((a) =>
            publicText(a)
          ),
          evidence_ids: evidenceIds.filter((a): a is string => typeof a === "string").slice(0, 8).map(publicIdentity)
        }
        const known = decisions.get(key)
        if (known === undefined) decisions.set(key, { key, seq, entry })
        else known.entry = entry
        return
      }
      case "command_execution": {
        const command = reqStr(item, "command")
        const status = oneOf(item, "status", EXEC_STATUS)
        const exit = optInt(item, "exit_code")
        const ctx = contextOf(item, false)
        const op = operation(r, "command", whereOf(ctx), id, command, ctx?.activity)
        settle(op, r, completed, execStatus(status), `${status}:${exit ?? ""}`, exit)
        return
      }
      case "tool_invocation": {
        const name = reqStr(item, "tool_name")
        const status = oneOf(item, "status", EXEC_STATUS)
        const outcome = optOneOf(item, "outcome", TOOL_OUTCOMES)
        const ctx = contextOf(item, false)
        const where = whereOf(ctx)
        const label = toolLabel(name, item)
        // A later record without the arguments keeps the subject an earlier one named.
        const keep = label === name && operations.get(identity(where, id))?.rawLabel.startsWith(`${name} `) === true
        const op = operation(r, "tool", where, id, keep ? "" : label, ctx?.activity)
        settle(op, r, completed, toolStatus(status, outcome), `${status}:${outcome ?? ""}`, undefined)
        return
      }
      case "tool_output": {
        const callId = reqStr(item, "call_id")
        const status = oneOf(item, "status", EXEC_STATUS)
        const exit = optInt(item, "exit_code")
        const ctx = contextOf(item, false)
        const where = whereOf(ctx)
        const op = operation(r, "tool", where, callId, "", ctx?.activity)
        if (op.label.length === 0) op.label = publicText(`tool ${callId}`)
        const ev = evidence(r, id)
        const out: OutputState = op.output ?? {
          startSeq: seq,
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
        return
      }
      case "file_change": {
        const status = oneOf(item, "status", ["completed", "failed"] as const)
        const rawChanges = item.changes
        if (!Array.isArray(rawChanges)) throw Bad.instance
        const paths: Array<string> = []
        for (const c of rawChanges) {
          if (!isJsonObject(c)) throw Bad.instance
          paths.push(reqStr(c, "path"))
        }
        const diff = optStr(item, "unified_diff")
        const incomplete = item.diff_incomplete === true
        const ctx = contextOf(item, false)
        const label = paths.length === 0 ? "(no paths)" : paths.join("\u0000")
        const op = operation(
          r,
          "edit",
          whereOf(ctx),
          id,
          label,
          ctx?.activity,
          (raw) => publicText(raw.split("\u0000").map((p) => publicPath(p)).join(", "), LABEL_LIMIT)
        )
        // A file_change carries a terminal status on every record; only item.completed settles it.
        const before = op.terminal
        settle(op, r, completed, completed ? status : "in progress", `${status}:${diff?.length ?? ""}`, undefined)
        if (!before || op.terminal) {
          op.paths = paths
          op.diffs = diff === undefined ? undefined : parseDiff(diff, paths)
          op.diffMissing = diff === undefined || incomplete
        }
        return
      }
      case "mcp_tool_call": {
        const name = reqStr(item, "tool_name")
        const status = optOneOf(item, "status", ["started", "completed", "failed"] as const)
        const ctx = contextOf(item, false)
        const op = operation(r, "mcp", whereOf(ctx), id, `mcp ${name}`, ctx?.activity)
        const s = status === "failed" ? "failed" : status === "completed" ? "completed" : "in progress"
        settle(op, r, completed, s, s, undefined)
        return
      }
      case "web_search": {
        const query = reqStr(item, "query")
        const ctx = contextOf(item, false)
        const op = operation(r, "web_search", whereOf(ctx), id, `search: ${query}`, ctx?.activity)
        settle(op, r, completed, completed ? "completed" : "in progress", "done", undefined)
        return
      }
      case "harness": {
        const event = reqStr(item, "event")
        const ctx = contextOf(item, false)
        const where = whereOf(ctx)
        if (event !== "delegated_agent_status") return
        const status = optStr(item, "status") ?? "unknown"
        const child = optStr(item, "task_id") ?? optStr(item, "session_id") ?? id
        const op = operation(r, "delegation", where, id, `delegated agent ${child}`, ctx?.activity)
        const lower = status.toLowerCase()
        const s = lower.includes("fail") || lower.includes("error")
          ? "failed"
          : lower.includes("cancel")
          ? "cancelled"
          : lower.includes("complete") || lower === "succeeded" || lower === "success" || lower === "done"
          ? "completed"
          : "in progress"
        settle(op, r, completed, s, status, optInt(item, "exit_code"))
        return
      }
      case "error": {
        const message = reqStr(item, "message")
        const where = whereOf(contextOf(item, false))
        if (completed) {
          eventFailures.push({ seq, entry: fact("error", publicText(message), "error", evidence(r, id), where) })
        }
        return
      }
      default:
        throw Bad.instance
    }
  }

  const onTurnEnd = (r: ExplanationRecord, e: Json, status: string, failure: string | undefined) => {
    if (failure !== undefined) reqStr(e, "message")
    const u = optObj(e, "usage")
    setStatus(status)
    const lastTurn = turns[turns.length - 1]
    if (lastTurn !== undefined && lastTurn.entry.status === "in progress") {
      turns[turns.length - 1] = { seq: lastTurn.seq, entry: { ...lastTurn.entry, status } }
    }
    sessionUsage = addUsage(sessionUsage, u)
    if (currentTask !== undefined) {
      const t = taskState(currentTask)
      t.usage = addUsage(t.usage, u)
    }
    if (failure !== undefined) {
      eventFailures.push({
        seq,
        entry: fact(
          "turn",
          publicText(`${failure}: ${str(e, "message") ?? ""}`),
          failure === "turn blocked" ? "blocked" : "failed",
          evidence(r, null),
          {
            task: currentTask ?? null,
            actor: null,
            parent: null,
            timestamp: null
          }
        )
      })
    }
  }

  const reduce = (r: ExplanationRecord, e: Json) => {
    const type = reqStr(e, "type")
    switch (type) {
      case "turn.started": {
        const ctx = contextOf(e, true)
        const tb = optObj(e, "token_breakdown")
        if (ctx === undefined) legacy++
        else {
          noteAgent(ctx.actor, ctx.parent)
          currentTask = ctx.task
          latestTask = ctx.task
          if (ctx.origin === "user" && ctx.task !== undefined) latestUserTask = ctx.task
        }
        setStatus("in progress")
        const where: Where = {
          task: currentTask ?? null,
          actor: ctx?.actor ?? null,
          parent: ctx?.parent ?? null,
          timestamp: ctx?.timestamp ?? null
        }
        const ev = evidence(r, ctx?.turn ?? null)
        turns.push({ seq, entry: fact("turn", `turn ${turns.length + 1}`, "in progress", ev, where) })
        if (ctx?.origin === "user") {
          goals.push({
            seq,
            entry: fact("goal", publicText(requestText(ctx.goal ?? "(goal not recorded)")), "recorded", ev, where)
          })
        } else if (ctx?.origin === "correction") {
          plans.push({
            seq,
            entry: fact("plan", publicText(`correction: ${ctx.goal ?? "(no text)"}`), "recorded", ev, where)
          })
        }
        if (tb !== undefined) {
          const breakdown: Record<string, number> = {}
          for (const [k, v] of Object.entries(tb)) if (typeof v === "number") breakdown[k] = v
          breakdowns.push({
            seq,
            entry: { fact: fact("turn", `turn ${turns.length} token breakdown`, "recorded", ev, where), breakdown }
          })
        }
        return
      }
      case "turn.completed":
        return onTurnEnd(r, e, "completed", undefined)
      case "turn.failed":
        return onTurnEnd(r, e, "failed", "turn failed")
      case "turn.blocked":
        return onTurnEnd(r, e, "blocked", "turn blocked")
      case "thread.completed": {
        const cost = e.total_cost_usd
        if (typeof cost === "number" && Number.isFinite(cost)) costUsd = cost
        const subtype = str(e, "subtype")
        sessionStatus = subtype === undefined || subtype === "success" ? "completed" : `completed (${subtype})`
        return
      }
      case "error": {
        const message = reqStr(e, "message")
        eventFailures.push({
          seq,
          entry: fact("error", publicText(message), "error", evidence(r, null), {
            task: currentTask ?? null,
            actor: null,
            parent: null,
            timestamp: null
          })
        })
        return
      }
      case "item.started":
      case "item.updated":
      case "item.completed": {
        const item = optObj(e, "item")
        if (item === undefined) throw Bad.instance
        return onItem(r, type === "item.started" ? "started" : type === "item.updated" ? "updated" : "completed", item)
      }
      case "interjected": {
        const text = optStr(e, "text")
        plans.push({
          seq,
          entry: fact(
            "plan",
            publicText(`correction: ${text ?? "(interjection without text)"}`),
            "recorded",
            evidence(r, null),
            {
              task: currentTask ?? null,
              actor: null,
              parent: null,
              timestamp: null
            }
          )
        })
        return
      }
      case "plan.approval.requested": {
        const file = optStr(e, "plan_file")
        plans.push({
          seq,
          entry: fact(
            "plan",
            publicText(`plan approval requested${file === undefined ? "" : ` (${file})`}`),
            "pending",
            evidence(r, null),
            { task: currentTask ?? null, actor: null, parent: null, timestamp: null }
          )
        })
        return
      }
      case "plan.approval.resolved": {
        const decision = reqStr(e, "decision")
        const automatic = e.automatic === true
        plans.push({
          seq,
          entry: fact(
            "plan",
            publicText(`plan approval: ${decision}${automatic ? " (automatic)" : ""}`),
            decision,
            evidence(r, null),
            { task: currentTask ?? null, actor: null, parent: null, timestamp: null }
          )
        })
        return
      }
      default:
        if (!isKnownEventType(type)) unknown++
        return
    }
  }

  const add = (r: ExplanationRecord) => {
    seq++
    if (r.event === undefined) {
      malformed++
      return
    }
    const e = r.event
    // A record whose used fields have the wrong shape is counted as malformed; every field is
    // read before the state changes, so such a record leaves no trace.
    const outcome = Result.try(() => reduce(r, e))
    if (Result.isFailure(outcome)) {
      if (outcome.failure instanceof Bad) malformed++
      else throw outcome.failure
    }
  }

  const model: ExplanationFold["model"] = ({ evictedTurns, revision, scope }) => {
    const taskId = scope === "session" ? null : latestUserTask ?? latestTask ?? null
    const inScope = (where: { readonly task_id: string | null }) => taskId === null || where.task_id === taskId
    const ops = order.filter((op) => taskId === null || op.where.task === taskId)
    const warnings: Array<string> = []

    const entryOf = (op: Operation, status: string = op.status): ExplanationEntry =>
      fact(op.kind, op.label, status, op.evidence, op.where)

    const actions = ops.filter((op) => op.kind !== "edit").map((op) => entryOf(op))

    // Mutation attempts: any file change, any command/tool recorded as a mutation.
    let lastMutation = -1
    for (const op of ops) {
      if (op.kind === "edit" || op.activity === "mutation") lastMutation = Math.max(lastMutation, op.seq)
    }

    // Changes.
    const successfulEdits = ops.filter((op) => op.kind === "edit" && op.terminal && op.status === "completed")
    const changes: Array<ExplanationEntry> = []
    const changeDiffs = new Map<string, { diff: PathDiff | undefined; entry: ExplanationEntry }>()
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
    if (missingDiffs > 0) warnings.push(`diff unavailable for ${count(missingDiffs, "recorded file change")}`)

    // Verification.
    const verification: Array<VerificationEntry> = []
    for (const op of ops) {
      if (op.activity !== "verification") continue
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
        else if (op.status === "failed" || op.status === "denied") status = "failed or denied"
        else if (!op.terminal) status = "pending"
        else if (!op.hasExitCode) status = "unconfirmed"
        else status = op.exitCode === 0 ? "passed" : "failed or denied"
      }
      verification.push({
        fact: fact(op.kind, op.label, status, ev, op.where),
        status,
        exit_code: op.exitCode,
        fresh: status === "passed" && start > lastMutation
      })
    }

    // Failures.
    const failureFacts: Array<Fact> = []
    for (const op of ops) {
      if (isFailedStatus(op.status)) failureFacts.push({ seq: op.seq, entry: entryOf(op) })
    }
    for (const f of eventFailures) if (inScope(f.entry)) failureFacts.push(f)
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

    // Review priorities.
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

    // Graph.
    const nodeOf = (op: Operation) =>
      `event ${op.firstEvidence.offset}:${op.firstEvidence.digest.slice(0, 12)} ${
        publicIdentity(op.where.task ?? "-")
      }/${publicIdentity(op.where.actor ?? "-")}/${publicIdentity(op.itemId)}`
    const graph: Array<GraphEdge> = []
    let previous: string | undefined
    for (const op of ops) {
      const node = nodeOf(op)
      if (previous !== undefined && previous !== node) {
        graph.push({ from: previous, to: node, relation: "recorded next" })
      }
      previous = node
      if (op.kind === "edit" && op.terminal && op.status === "completed") {
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
    if (agentList.some((a) => a.parent_actor_id !== null && !agents.has(a.parent_actor_id))) {
      warnings.push("some parent agents have no recorded records (missing ancestry)")
    }

    const bySeq = <A extends { readonly seq: number }>(xs: ReadonlyArray<A>) => [...xs].sort((a, b) => a.seq - b.seq)
    const plan = bySeq([...plans, ...planItems.values()]).map((p) => p.entry).filter(inScope)

    const task = taskId === null ? undefined : tasks.get(taskId)
    const usage = scope === "session" ? sessionUsage : task?.usage
    return {
      session_id: sessionId,
      revision,
      scope,
      task_id: taskId === null ? null : publicIdentity(taskId),
      status: scope === "session" || task === undefined ? sessionStatus : task.status,
      goals: goals.map((g) => g.entry).filter(inScope),
      turns: turns.map((t) => t.entry).filter(inScope),
      actions,
      changes,
      edits: ops.filter((op) => op.kind === "edit").map((op) => entryOf(op)),
      edit_operations: successfulEdits.length,
      decisions: bySeq([...decisions.values()]).map((d) => d.entry).filter((d) => inScope(d.fact)),
      verification,
      token_breakdowns: breakdowns.map((b) => b.entry).filter((b) => inScope(b.fact)),
      failures,
      review_priorities: signals.map((s) => s.signal),
      plan_evolution: plan,
      agents: agentList,
      graph,
      usage: usage ?? null,
      cost_usd: scope === "session" ? costUsd : null,
      completeness: {
        malformed_records: malformed,
        unknown_records: unknown,
        legacy_records: legacy,
        evicted_turns: evictedTurns,
        warnings
      }
    }
  }

  return { add, records: () => seq, model }
}

/** Every evidence reference of a model, sorted by offset and de-duplicated. */
export const evidenceReferences = (model: ExplanationModel): ReadonlyArray<EvidenceRef> => {
  const all: Array<EvidenceRef> = []
  const facts = (xs: ReadonlyArray<ExplanationEntry>) => xs.forEach((x) => all.push(x.evidence))
  facts(model.goals)
  facts(model.actions)
  facts(model.changes)
  facts(model.failures)
  facts(model.plan_evolution)
  model.decisions.forEach((d) => all.push(d.fact.evidence))
  model.verification.forEach((v) => all.push(v.fact.evidence))
  model.token_breakdowns.forEach((t) => all.push(t.fact.evidence))
  model.review_priorities.forEach((r) => all.push(r.fact.evidence))
  all.sort((a, b) => a.offset - b.offset || a.digest.localeCompare(b.digest))
  return all.filter((e, i) => {
    const prev = all[i - 1]
    return prev === undefined || prev.offset !== e.offset || prev.digest !== e.digest
  })
}

/** The bound of one serialised explanation page. */
export const EXPLANATION_PAGE_BYTES = 64 * 1024

/** One page of a model: every collection sliced the same way, scalars repeated. */
export interface ExplanationPage {
  readonly model: ExplanationModel
  readonly offset: number
  readonly next_offset: number | null
}

/**
 * Pages a model: every collection sliced `[offset, offset + count)` with `count` starting at 32
 * and halved until the page serialises to at most 64 KiB (or `count` is 1); `next_offset` is
 * null when no collection is longer.
 */
export const pageExplanation = (model: ExplanationModel, offset: number): ExplanationPage => {
  const start = Math.max(0, Math.floor(offset))
  const longest = Math.max(
    model.goals.length,
    model.turns.length,
    model.actions.length,
    model.changes.length,
    model.edits.length,
    model.decisions.length,
    model.verification.length,
    model.token_breakdowns.length,
    model.failures.length,
    model.review_priorities.length,
    model.plan_evolution.length,
    model.agents.length,
    model.graph.length,
    model.completeness.warnings.length
  )
  const slice = (count: number): ExplanationModel => {
    const s = <A>(xs: ReadonlyArray<A>) => xs.slice(start, start + count)
    return {
      ...model,
      goals: s(model.goals),
      turns: s(model.turns),
      actions: s(model.actions),
      changes: s(model.changes),
      edits: s(model.edits),
      decisions: s(model.decisions),
      verification: s(model.verification),
      token_breakdowns: s(model.token_breakdowns),
      failures: s(model.failures),
      review_priorities: s(model.review_priorities),
      plan_evolution: s(model.plan_evolution),
      agents: s(model.agents),
      graph: s(model.graph),
      completeness: { ...model.completeness, warnings: s(model.completeness.warnings) }
    }
  }
  const encoder = new TextEncoder()
  let count = 32
  let page = slice(count)
  while (count > 1 && encoder.encode(JSON.stringify(page)).length > EXPLANATION_PAGE_BYTES) {
    count = Math.floor(count / 2)
    page = slice(count)
  }
  return { model: page, offset: start, next_offset: start + count < longest ? start + count : null }
}
