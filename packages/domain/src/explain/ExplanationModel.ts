/**
 * The explanation model (docs/explain.md): the types of what an explanation says — goals,
 * actions, file changes, failures, decisions, verification with freshness, plan evolution,
 * review priorities, the action/file graph, usage and cost, and how complete the record is —
 * and of the records the fold reads. Types only, so the renderers and the reader depend on the
 * shape without the fold.
 *
 * **Gotchas**: every model field is part of the JSON output (`logbook explain --json`, pages,
 * the HTML report's embedded model); optional facts are `null`, never absent.
 */
import type { UsageTotals } from "../contract/Usage.ts"

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
export type VerificationStatus = "passed" | "failed" | "failed or denied" | "unconfirmed" | "pending" | "cancelled"

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
  readonly event: { readonly [key: string]: unknown } | undefined
}
