/**
 * `logbook goal show <session>` and `logbook progress show <session>`: the session's goal
 * tracker snapshot (`derived/goal.json`) and ProgressLedger (`derived/progress.json`).
 * Read-only: nothing is opened for writing and a snapshot is shown as stored, not restored.
 */
import type { GoalHistoryEntry, GoalSnapshot } from "@logbook/domain"
import { progressToMarkdown } from "@logbook/domain"
import { findSession } from "@logbook/projections"
import { goalSnapshotPath, loadGoalSnapshot, loadProgress, progressPath } from "@logbook/store"
import { Effect, Option } from "effect"
import { Command } from "effect/cli"
import { jsonFlag, sessionArgument } from "../Flags.ts"
import { printAll, printJson, printLines } from "../Output.ts"
import { location } from "../Root.ts"

/** How many history entries the human view shows (newest last). */
const HISTORY_SHOWN = 8

const formatDuration = (ms: number): string => {
  const seconds = Math.floor(ms / 1000)
  const h = Math.floor(seconds / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  return h > 0 ? `${h}h ${m}m ${s}s` : m > 0 ? `${m}m ${s}s` : `${s}s`
}

const historyLine = (entry: GoalHistoryEntry): string =>
  `    ${entry.timestamp}  ${entry.event}${entry.detail === null ? "" : ` (${entry.detail})`}` +
  `${entry.round === null ? "" : ` round ${entry.round}`}`

const goalLines = (session: string, goal: GoalSnapshot): Array<string> => [
  `Goal ${goal.goal_id} of session ${session}`,
  `  Objective     ${goal.objective}`,
  `  Status        ${goal.status}${goal.pause_message === null ? "" : ` — ${goal.pause_message}`}`,
  `  Phase         ${goal.phase}`,
  `  Budget        ${goal.token_budget === null ? "none" : `${goal.token_budget} tokens`}` +
  ` (high water ${goal.tokens_used_high_water})`,
  `  Elapsed       ${formatDuration(goal.elapsed_ms)} active`,
  `  Rounds        ${goal.total_worker_rounds} worker, ${goal.total_verify_rounds} verify` +
  ` (${goal.rounds_since_verify} since the last verification)`,
  `  Counters      classifier stalls ${goal.classifier_stall_count}, not achieved in a row ` +
  `${goal.consecutive_not_achieved}, strategist bonus ${goal.strategist_cap_bonus}`,
  `  Verifier id   ${goal.verifier_id ?? "(missing: a fresh one is generated when the goal is restored)"}`,
  `  History       ${goal.history.length} entries${
    goal.history.length > HISTORY_SHOWN ? `, last ${HISTORY_SHOWN}` : ""
  }`,
  ...goal.history.slice(-HISTORY_SHOWN).map(historyLine)
]

/** `goal show <session> [--json]`. */
export const goalShowCommand = Command.make(
  "show",
  { session: sessionArgument, json: jsonFlag },
  Effect.fn("cli.goal.show")(function*({ json, session }) {
    const where = yield* location
    const paths = yield* findSession(where.sessionsDir, session)
    const goal = yield* loadGoalSnapshot(paths)
    if (json) return yield* printJson(Option.getOrNull(goal))
    if (Option.isNone(goal)) {
      return yield* printLines(`Session ${session} has no goal (${goalSnapshotPath(paths)} does not exist).`)
    }
    yield* printAll(goalLines(session, goal.value))
  })
).pipe(
  Command.withDescription(
    "Show the goal tracked in a session: status, phase, token budget, active time, counters and the last " +
      "history entries, as stored in derived/goal.json. Read-only. --json prints the stored snapshot (null when none)."
  ),
  Command.withExamples([
    { command: "logbook goal show demo", description: "The goal of the session `demo`" },
    { command: "logbook goal show demo --json", description: "The goal snapshot as JSON" }
  ])
)

/** `progress show <session> [--json]`. */
export const progressShowCommand = Command.make(
  "show",
  { session: sessionArgument, json: jsonFlag },
  Effect.fn("cli.progress.show")(function*({ json, session }) {
    const where = yield* location
    const paths = yield* findSession(where.sessionsDir, session)
    const ledger = yield* loadProgress(paths)
    if (json) return yield* printJson(Option.getOrNull(ledger))
    if (Option.isNone(ledger)) {
      return yield* printLines(`Session ${session} has no progress ledger (${progressPath(paths)} does not exist).`)
    }
    yield* printLines(progressToMarkdown(ledger.value))
  })
).pipe(
  Command.withDescription(
    "Show a session's progress ledger (derived/progress.json) as Markdown: goal, completion, confidence, " +
      "stall, handoff, known issues and milestones. Read-only. --json prints the stored ledger (null when none)."
  ),
  Command.withExamples([
    { command: "logbook progress show demo", description: "The ledger of the session `demo` as Markdown" }
  ])
)

/** `goal`: the goal tracker of a session (`goal show <session>`). */
export const goalCommand = Command.make("goal").pipe(
  Command.withDescription("Inspect the goal tracked in a session (see `goal show`)."),
  Command.withSubcommands([goalShowCommand])
)

/** `progress`: the progress ledger of a session (`progress show <session>`). */
export const progressCommand = Command.make("progress").pipe(
  Command.withDescription("Inspect the progress ledger of a session (see `progress show`)."),
  Command.withSubcommands([progressShowCommand])
)
