/**
 * The ProgressLedger (docs/goals.md#progress-ledger): a tiny, compaction-safe summary of "are we getting
 * closer to done?" stored at `derived/progress.json`. Everything here is pure; callers pass
 * the current time as an RFC 3339 string and the store persists the encoded bytes.
 */
import { Effect, Schema } from "effect"
import type { Result } from "effect"
import { lazy } from "../internal/lazy.ts"

/** Status of one milestone (wire: snake_case). */
export const MilestoneStatus = Schema.Literals(["pending", "in_progress", "done", "blocked"])

/** Status of one milestone (wire: snake_case). */
export type MilestoneStatus = typeof MilestoneStatus.Type

/** One tracked milestone toward the session goal. */
export const Milestone = Schema.Struct({
  id: Schema.String,
  description: Schema.String,
  status: MilestoneStatus
})

/** One tracked milestone toward the session goal. */
export type Milestone = typeof Milestone.Type

const nullByDefault = Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null)))

/**
 * The ledger. The first six fields are required on read (`stalled_since` may be null);
 * the handoff fields default to null / empty when absent. Every field is always written,
 * in declaration order.
 */
export const ProgressLedger = Schema.Struct({
  session_id: Schema.String,
  goal: Schema.String,
  milestones: Schema.Array(Milestone),
  confidence: Schema.Finite,
  stalled_since: Schema.NullOr(Schema.String),
  updated_at: Schema.String,
  previous_session_id: nullByDefault,
  handoff_summary: nullByDefault,
  known_issues: Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  git_checkpoint: nullByDefault
})

/** The ledger. */
export type ProgressLedger = typeof ProgressLedger.Type

/** Confidence of a new ledger. */
export const PROGRESS_INITIAL_CONFIDENCE = 1.0

/** Confidence gained by each advance (capped at 1). */
export const PROGRESS_ADVANCE_STEP = 0.05

/** Confidence lost by each stall (floored at 0). */
export const PROGRESS_STALL_STEP = 0.1

/** A fresh ledger: no milestones, full confidence, not stalled, no handoff data. */
export const newProgressLedger = (sessionId: string, goal: string, nowIso: string): ProgressLedger => ({
  session_id: sessionId,
  goal,
  milestones: [],
  confidence: PROGRESS_INITIAL_CONFIDENCE,
  stalled_since: null,
  updated_at: nowIso,
  previous_session_id: null,
  handoff_summary: null,
  known_issues: [],
  git_checkpoint: null
})

/** Fraction of milestones that are done; 1 when nothing is tracked yet. */
export const completionRatio = (ledger: ProgressLedger): number =>
  ledger.milestones.length === 0
    ? 1
    : ledger.milestones.filter((m) => m.status === "done").length / ledger.milestones.length

/** Whether every tracked milestone is done (true when none are tracked). */
export const isProgressComplete = (ledger: ProgressLedger): boolean => completionRatio(ledger) >= 1

/** Whether the ledger currently reports a stall. */
export const isProgressStalled = (ledger: ProgressLedger): boolean => ledger.stalled_since !== null

/** Records forward progress: clears the stall marker and nudges confidence up (max 1). */
export const noteAdvance = (ledger: ProgressLedger, nowIso: string): ProgressLedger => ({
  ...ledger,
  stalled_since: null,
  confidence: Math.min(1, ledger.confidence + PROGRESS_ADVANCE_STEP),
  updated_at: nowIso
})

/** Records a stall: keeps the first stall instant and nudges confidence down (min 0). */
export const noteStall = (ledger: ProgressLedger, nowIso: string): ProgressLedger => ({
  ...ledger,
  stalled_since: ledger.stalled_since ?? nowIso,
  confidence: Math.max(0, ledger.confidence - PROGRESS_STALL_STEP),
  updated_at: nowIso
})

/** Replaces the milestone set. */
export const setMilestones = (
  ledger: ProgressLedger,
  milestones: ReadonlyArray<Milestone>,
  nowIso: string
): ProgressLedger => ({ ...ledger, milestones, updated_at: nowIso })

/** Replaces the session goal. */
export const setProgressGoal = (ledger: ProgressLedger, goal: string, nowIso: string): ProgressLedger => ({
  ...ledger,
  goal,
  updated_at: nowIso
})

/** Records handoff metadata from the predecessor session (the checkpoint is replaced, null when omitted). */
export const setHandoff = (
  ledger: ProgressLedger,
  handoff: { readonly previousSessionId: string; readonly summary: string; readonly gitCheckpoint?: string },
  nowIso: string
): ProgressLedger => ({
  ...ledger,
  previous_session_id: handoff.previousSessionId,
  handoff_summary: handoff.summary,
  git_checkpoint: handoff.gitCheckpoint ?? null,
  updated_at: nowIso
})

/** Appends an issue carried forward from a previous session. */
export const addKnownIssue = (ledger: ProgressLedger, issue: string, nowIso: string): ProgressLedger => ({
  ...ledger,
  known_issues: [...ledger.known_issues, issue],
  updated_at: nowIso
})

const milestoneMark: { readonly [S in MilestoneStatus]: string } = {
  done: "[x]",
  in_progress: "[~]",
  blocked: "[!]",
  pending: "[ ]"
}

/**
 * The human-readable summary a resumed session can orient from: header fields, optional
 * stall / handoff / known-issue sections, then the milestone checklist. Completion is a
 * rounded whole percent, confidence has two decimals; every line ends with `\n`.
 */
export const progressToMarkdown = (ledger: ProgressLedger): string => {
  const lines: Array<string> = [
    "# Session Progress",
    "",
    `**Goal:** ${ledger.goal}`,
    `**Completion:** ${Math.round(completionRatio(ledger) * 100)}%`,
    `**Confidence:** ${ledger.confidence.toFixed(2)}`
  ]
  if (ledger.stalled_since !== null) lines.push(`**Stalled since:** ${ledger.stalled_since}`)
  lines.push(`**Updated:** ${ledger.updated_at}`, "")
  if (ledger.previous_session_id !== null) lines.push(`**Handed off from:** ${ledger.previous_session_id}`)
  if (ledger.handoff_summary !== null) lines.push(`**Handoff summary:** ${ledger.handoff_summary}`)
  if (ledger.git_checkpoint !== null) lines.push(`**Git checkpoint:** \`${ledger.git_checkpoint}\``)
  if (ledger.known_issues.length > 0) {
    lines.push("", "## Known Issues", "", ...ledger.known_issues.map((issue) => `- ${issue}`))
  }
  if (ledger.milestones.length === 0) {
    lines.push("", "_No tracked milestones yet._")
  } else {
    lines.push(
      "",
      "## Milestones",
      "",
      ...ledger.milestones.map((m) => `${milestoneMark[m.status]} ${m.id} — ${m.description}`)
    )
  }
  return lines.join("\n") + "\n"
}

const ledgerJson = Schema.fromJsonString(ProgressLedger)
const encodeLedgerJson = lazy(() => Schema.encodeSync(ledgerJson))
const decodeLedgerJson = Schema.decodeUnknownResult(ledgerJson)

/**
 * The canonical `progress.json` bytes: compact JSON, keys in declaration order.
 * **Gotchas**: throws a `SchemaError` only for a hand-built ledger with a non-finite confidence.
 */
export const encodeProgress = (ledger: ProgressLedger): string => encodeLedgerJson()(ledger)

/** Parses `progress.json` text; a failure is the reference's `Json` error case. */
export const decodeProgressText = (text: string): Result.Result<ProgressLedger, Schema.SchemaError> =>
  decodeLedgerJson(text)
