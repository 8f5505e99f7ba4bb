/**
 * The GoalTracker state machine (docs/goals.md#goal-tracker) as a pure reducer: one goal
 * orchestration per session, driven by commands, with time passed in as a value. The
 * persisted `GoalOrchestration` snapshot codec lives here too, because its decoding rules
 * (total status, tolerant phase, restore never self-driving) are part of the machine.
 * Scratch-directory I/O is only described (`effects`); the store performs it.
 */
import { Data, Option, Schema } from "effect"
import type { Result } from "effect"
import { lazy } from "../internal/lazy.ts"
import { formatRfc3339 } from "../log/Rfc3339.ts"
import {
  Count,
  countDefaultZero,
  GOAL_EVENT_VALUES,
  GOAL_PHASE_VALUES,
  GOAL_STATUS_VALUES,
  goalEventFromWire,
  goalPhaseFromWire,
  goalStatusFromWire,
  intDefaultZero,
  nullDefault,
  omittedWhenNull,
  stringsOmittedWhenEmpty,
  tolerantLiteral
} from "./internal/goalWire.ts"

/** Identical gap fingerprints in a row that count as a classifier stall. */
export const GOAL_CLASSIFIER_STALL_THRESHOLD = 2

/** Extra classifier runs granted while a strategist recommendation is being tried. */
export const GOAL_STRATEGIST_CAP_BONUS = 3

/** The stall threshold while the strategist cap bonus is active ([DESIGN/U]: 2 + 3). */
export const GOAL_STRATEGIST_STALL_THRESHOLD = GOAL_CLASSIFIER_STALL_THRESHOLD + GOAL_STRATEGIST_CAP_BONUS

/** Most history entries a goal keeps; the oldest are dropped first. */
export const GOAL_HISTORY_CAP = 64

/** Name of the goal scratch directory inside the session directory. */
export const GOAL_SCRATCH_DIR = "goal"

/** Lifecycle status of a goal (wire: snake_case). */
export const GoalStatus = Schema.Literals(GOAL_STATUS_VALUES)

/** Lifecycle status of a goal (wire: snake_case). */
export type GoalStatus = typeof GoalStatus.Type

/** Execution phase of a goal (wire: snake_case). */
export const GoalPhase = Schema.Literals(GOAL_PHASE_VALUES)

/** Execution phase of a goal (wire: snake_case). */
export type GoalPhase = typeof GoalPhase.Type

/** A goal history event; `unknown` stands for any event this version does not know. */
export const GoalEvent = Schema.Literals(GOAL_EVENT_VALUES)

/** A goal history event; `unknown` stands for any event this version does not know. */
export type GoalEvent = typeof GoalEvent.Type

/** Aggregate verdict of the goal-verification stage (wire: snake_case). */
export const GoalClassifierVerdict = Schema.Literals(["achieved", "not_achieved"])

/** Aggregate verdict of the goal-verification stage (wire: snake_case). */
export type GoalClassifierVerdict = typeof GoalClassifierVerdict.Type

/** Why a goal is paused; each reason maps to one paused status and one history detail. */
export const GoalPauseReason = Schema.Literals(["user", "back_off", "no_progress", "verification", "infra"])

/** Why a goal is paused; each reason maps to one paused status and one history detail. */
export type GoalPauseReason = typeof GoalPauseReason.Type

const pauseStatus: { readonly [R in GoalPauseReason]: GoalStatus } = {
  user: "user_paused",
  back_off: "back_off_paused",
  no_progress: "no_progress_paused",
  verification: "blocked",
  infra: "infra_paused"
}

const pauseDetail: { readonly [R in GoalPauseReason]: string } = {
  user: "user",
  back_off: "back_off",
  no_progress: "no_progress",
  verification: "blocked",
  infra: "infra"
}

/** The status a pause with `reason` moves an active goal to. */
export const goalStatusForPause = (reason: GoalPauseReason): GoalStatus => pauseStatus[reason]

/** Whether `status` is one of the paused statuses (including `blocked`), i.e. resumable. */
export const isGoalPaused = (status: GoalStatus): boolean =>
  status === "user_paused" || status === "back_off_paused" || status === "no_progress_paused" ||
  status === "infra_paused" || status === "blocked"

/**
 * A goal's verifier id: 12 lowercase hex characters (the first 12 of a UUID v4 in simple
 * form), generated at creation and stable for the goal's whole life (docs/goals.md#goal-tracker).
 */
export const VerifierId = Schema.String.check(Schema.isPattern(/^[0-9a-f]{12}$/)).pipe(Schema.brand("VerifierId"))

/** A goal's verifier id: 12 lowercase hex characters. */
export type VerifierId = typeof VerifierId.Type

/** Whether a value is a well-formed verifier id. */
export const isVerifierId = Schema.is(VerifierId)

/**
 * The verifier id of a UUID (hyphenated or simple, any case): its first 12 hex digits in
 * lowercase; none when the input is not 32 hex digits once hyphens are removed.
 */
export const verifierIdFromUuid = (uuid: string): Option.Option<VerifierId> => {
  const simple = uuid.replaceAll("-", "").toLowerCase()
  return /^[0-9a-f]{32}$/.test(simple) ? Schema.decodeUnknownOption(VerifierId)(simple.slice(0, 12)) : Option.none()
}

/**
 * One goal history entry. `detail`, `round`, `tokens_used` are omitted when null and
 * `unmet` when empty; unknown `event` strings decode as `unknown`.
 */
export const GoalHistoryEntry = Schema.Struct({
  timestamp: Schema.String,
  event: tolerantLiteral(GOAL_EVENT_VALUES, goalEventFromWire),
  detail: omittedWhenNull(Schema.String),
  round: omittedWhenNull(Count),
  tokens_used: omittedWhenNull(Schema.Int),
  unmet: stringsOmittedWhenEmpty
})

/** One goal history entry. */
export type GoalHistoryEntry = typeof GoalHistoryEntry.Type

// Declaration order is the canonical key order of the encoded snapshot.
const orchestrationFields = {
  goal_id: Schema.String,
  objective: Schema.String,
  status: tolerantLiteral(GOAL_STATUS_VALUES, goalStatusFromWire),
  phase: tolerantLiteral(GOAL_PHASE_VALUES, goalPhaseFromWire),
  token_budget: nullDefault(Schema.Int),
  elapsed_ms: Count,
  created_at: Schema.String,
  current_subagent_id: nullDefault(Schema.String),
  current_subagent_role: nullDefault(Schema.String),
  total_worker_rounds: countDefaultZero,
  total_verify_rounds: countDefaultZero,
  token_baseline: intDefaultZero,
  tokens_used_high_water: intDefaultZero,
  parent_tokens_spent: intDefaultZero,
  last_session_tokens_seen: nullDefault(Schema.Int),
  history: Schema.Array(GoalHistoryEntry),
  pause_message: omittedWhenNull(Schema.String),
  classifier_stall_count: countDefaultZero,
  classifier_runs_attempted: countDefaultZero,
  rounds_since_verify: countDefaultZero,
  consecutive_not_achieved: countDefaultZero,
  last_strategist_fired_at: countDefaultZero,
  strategist_cap_bonus: countDefaultZero,
  last_strategy_path: omittedWhenNull(Schema.String),
  last_strategy_recommendation: omittedWhenNull(Schema.String),
  changes_baseline_commit: omittedWhenNull(Schema.String),
  last_gap_fingerprint: omittedWhenNull(Schema.String)
}

/**
 * A persisted goal snapshot as read from disk (docs/goals.md#goal-tracker): the reference's fields with
 * their defaults and omissions, plus the additive `verifier_id`, which may be missing or
 * malformed here; `goalTrackerFromSnapshot` repairs it. Runtime-only counters are not fields.
 */
export const GoalSnapshot = Schema.Struct({ ...orchestrationFields, verifier_id: Schema.optionalKey(Schema.String) })

/** A persisted goal snapshot as read from disk. */
export type GoalSnapshot = typeof GoalSnapshot.Type

/**
 * The live goal record held by the tracker: a snapshot whose `verifier_id` is always valid.
 * Its encoding is the canonical snapshot (`verifier_id` written last).
 */
export const GoalOrchestration = Schema.Struct({ ...orchestrationFields, verifier_id: VerifierId })

/** The live goal record held by the tracker. */
export type GoalOrchestration = typeof GoalOrchestration.Type

/**
 * Runtime-only flags (never persisted): whether a budget overrun was already reported
 * and whether planning / verification work is in flight. Restoring or creating a goal
 * clears them.
 */
export interface GoalRuntimeFlags {
  readonly budget_limit_reported: boolean
  readonly planning_in_flight: boolean
  readonly verifying_in_flight: boolean
}

/** The runtime flags of a freshly created or restored goal: all false. */
export const idleGoalRuntime: GoalRuntimeFlags = {
  budget_limit_reported: false,
  planning_in_flight: false,
  verifying_in_flight: false
}

/**
 * The whole tracker: the optional goal, the monotonic instant (ms) the active-time timer
 * was last (re)started, and the runtime flags. The timer runs exactly while the goal is active.
 */
export interface GoalTrackerState {
  readonly goal: Option.Option<GoalOrchestration>
  readonly activeSince: Option.Option<number>
  readonly runtime: GoalRuntimeFlags
}

/** A tracker without a goal. */
export const emptyGoalTracker: GoalTrackerState = {
  goal: Option.none(),
  activeSince: Option.none(),
  runtime: idleGoalRuntime
}

/**
 * "Now" as a value: `wallMs` (epoch ms) stamps history and `created_at`; `monotonicMs`
 * (any monotonic origin) measures active time, so wall-clock jumps never distort `elapsed_ms`.
 */
export interface GoalClock {
  readonly wallMs: number
  readonly monotonicMs: number
}

/** What the caller must do to the `<session>/goal` scratch directory, in order (errors ignored). */
export type GoalScratchEffect = "remove_scratch" | "create_scratch"

// A variant without fields (the lint rule rejects a literal `{}`).
type NoPayload = Record<never, never>

/**
 * A command to the tracker. `ClaimStrategistFire.shouldFire` receives
 * `(consecutive_not_achieved, last_strategist_fired_at)` and must be pure.
 */
export type GoalCommand = Data.TaggedEnum<{
  CreateGoal: {
    readonly goalId: string
    readonly objective: string
    readonly tokenBudget: number | null
    readonly tokenBaseline: number
    readonly baselineCommit: string | null
    readonly verifierId: string
  }
  Pause: { readonly reason: GoalPauseReason; readonly message?: string }
  Resume: NoPayload
  Complete: NoPayload
  BudgetLimit: NoPayload
  Clear: NoPayload
  SetPhase: { readonly phase: GoalPhase }
  SetCurrentSubagent: { readonly id: string | null; readonly role: string | null }
  SetRuntimeFlag: { readonly flag: keyof GoalRuntimeFlags; readonly value: boolean }
  RecordHistory: {
    readonly event: GoalEvent
    readonly detail?: string
    readonly round?: number
    readonly tokensUsed?: number
    readonly unmet?: ReadonlyArray<string>
  }
  RecordClassifierStall: { readonly fingerprint: string }
  ResetClassifierStall: NoPayload
  RecordClassifierAttempt: NoPayload
  RollbackClassifierAttempt: NoPayload
  RecordNotAchievedStreak: NoPayload
  ClaimStrategistFire: {
    readonly shouldFire: (consecutiveNotAchieved: number, lastStrategistFiredAt: number) => boolean
  }
  RevokeStrategistCapBonus: NoPayload
  ResetStrategistState: NoPayload
  RecordStrategyRecommendation: { readonly path: string; readonly recommendation: string }
  AccountElapsed: NoPayload
}>

/** Constructors (`GoalCommand.Pause({ reason: "user" })`), `$is` and `$match` for goal commands. */
export const GoalCommand = Data.taggedEnum<GoalCommand>()

/** The value a command returns besides its new state (undefined for plain transitions). */
export type GoalOutput = boolean | number | Option.Option<number> | undefined

/**
 * The outcome of one command: the next state, whether the command applied (false means
 * the state is unchanged), its return value, and the scratch-directory effects to run.
 */
export interface GoalStep<O extends GoalOutput = GoalOutput> {
  readonly state: GoalTrackerState
  readonly applied: boolean
  readonly output: O
  readonly effects: ReadonlyArray<GoalScratchEffect>
}

const saturatingAdd = (a: number, b: number): number => Math.min(a + b, Number.MAX_SAFE_INTEGER)

const unchanged = <O extends GoalOutput>(state: GoalTrackerState, output: O): GoalStep<O> => ({
  state,
  applied: false,
  output,
  effects: []
})

const changed = <O extends GoalOutput>(
  state: GoalTrackerState,
  output: O,
  effects: ReadonlyArray<GoalScratchEffect> = []
): GoalStep<O> => ({ state, applied: true, output, effects })

const historyEntry = (
  event: GoalEvent,
  now: GoalClock,
  extra: Partial<Omit<GoalHistoryEntry, "timestamp" | "event">> = {}
): GoalHistoryEntry => ({
  timestamp: formatRfc3339(now.wallMs, "Z"),
  event,
  detail: extra.detail ?? null,
  round: extra.round ?? null,
  tokens_used: extra.tokens_used ?? null,
  unmet: extra.unmet ?? []
})

// Bounded by GOAL_HISTORY_CAP, so the copy is O(1) per command.
const withHistory = (goal: GoalOrchestration, entry: GoalHistoryEntry): GoalOrchestration => ({
  ...goal,
  history: [...goal.history, entry].slice(-GOAL_HISTORY_CAP)
})

const resetStrategist = (goal: GoalOrchestration): GoalOrchestration => ({
  ...goal,
  consecutive_not_achieved: 0,
  last_strategist_fired_at: 0,
  strategist_cap_bonus: 0,
  last_strategy_path: null,
  last_strategy_recommendation: null
})

const resetStall = (goal: GoalOrchestration): GoalOrchestration => ({
  ...goal,
  classifier_stall_count: 0,
  last_gap_fingerprint: null
})

// Time since the timer started; a monotonic source never runs backwards, but a clamp keeps
// a misbehaving caller from ever shrinking `elapsed_ms`.
const runningMs = (activeSince: Option.Option<number>, now: GoalClock): number =>
  Option.match(activeSince, { onNone: () => 0, onSome: (since) => Math.max(0, now.monotonicMs - since) })

const withAccounted = (goal: GoalOrchestration, state: GoalTrackerState, now: GoalClock): GoalOrchestration => ({
  ...goal,
  elapsed_ms: saturatingAdd(goal.elapsed_ms, Math.trunc(runningMs(state.activeSince, now)))
})

const withGoal = (state: GoalTrackerState, goal: GoalOrchestration): GoalTrackerState => ({
  ...state,
  goal: Option.some(goal)
})

/** The active time of the goal at `now`, including the interval not yet accounted (0 without a goal). */
export const goalElapsedAt = (state: GoalTrackerState, now: GoalClock): number =>
  Option.match(state.goal, {
    onNone: () => 0,
    onSome: (goal) => saturatingAdd(goal.elapsed_ms, Math.trunc(runningMs(state.activeSince, now)))
  })

type Command<T extends GoalCommand["_tag"]> = Data.TaggedEnum.Value<GoalCommand, T>

const isTokenCount = (n: number | null): boolean => n === null || Number.isSafeInteger(n)

const createGoal = (state: GoalTrackerState, c: Command<"CreateGoal">, now: GoalClock): GoalStep<undefined> => {
  if (!isVerifierId(c.verifierId) || !isTokenCount(c.tokenBudget) || !isTokenCount(c.tokenBaseline)) {
    return unchanged(state, undefined)
  }
  const goal: GoalOrchestration = {
    goal_id: c.goalId,
    objective: c.objective,
    status: "active",
    phase: "executing",
    token_budget: c.tokenBudget,
    elapsed_ms: 0,
    created_at: formatRfc3339(now.wallMs, "Z"),
    current_subagent_id: null,
    current_subagent_role: null,
    total_worker_rounds: 0,
    total_verify_rounds: 0,
    token_baseline: c.tokenBaseline,
    tokens_used_high_water: 0,
    parent_tokens_spent: 0,
    last_session_tokens_seen: c.tokenBaseline,
    history: [historyEntry("goal_created", now)],
    pause_message: null,
    classifier_stall_count: 0,
    classifier_runs_attempted: 0,
    rounds_since_verify: 0,
    consecutive_not_achieved: 0,
    last_strategist_fired_at: 0,
    strategist_cap_bonus: 0,
    last_strategy_path: null,
    last_strategy_recommendation: null,
    changes_baseline_commit: c.baselineCommit,
    last_gap_fingerprint: null,
    verifier_id: c.verifierId
  }
  // The scratch path is the same for every goal, so the old one goes first (the reference
  // created the new directory and then removed it again).
  const effects: ReadonlyArray<GoalScratchEffect> = Option.isSome(state.goal)
    ? ["remove_scratch", "create_scratch"]
    : ["create_scratch"]
  return changed(
    { goal: Option.some(goal), activeSince: Option.some(now.monotonicMs), runtime: idleGoalRuntime },
    undefined,
    effects
  )
}

const pause = (state: GoalTrackerState, c: Command<"Pause">, now: GoalClock): GoalStep<undefined> => {
  if (Option.isNone(state.goal) || state.goal.value.status !== "active") return unchanged(state, undefined)
  const goal = state.goal.value
  const paused: GoalOrchestration = {
    ...withAccounted(goal, state, now),
    status: goalStatusForPause(c.reason),
    pause_message: c.message ?? goal.pause_message
  }
  return changed(
    {
      ...withGoal(state, withHistory(paused, historyEntry("goal_paused", now, { detail: pauseDetail[c.reason] }))),
      activeSince: Option.none()
    },
    undefined
  )
}

const resume = (state: GoalTrackerState, now: GoalClock): GoalStep<undefined> => {
  if (Option.isNone(state.goal) || !isGoalPaused(state.goal.value.status)) return unchanged(state, undefined)
  const resumed: GoalOrchestration = {
    ...resetStall(resetStrategist(state.goal.value)),
    status: "active",
    pause_message: null,
    classifier_runs_attempted: 0,
    rounds_since_verify: 0
  }
  return changed(
    {
      ...withGoal(state, withHistory(resumed, historyEntry("goal_resumed", now))),
      activeSince: Option.some(now.monotonicMs)
    },
    undefined
  )
}

const finish = (
  state: GoalTrackerState,
  now: GoalClock,
  status: "complete" | "budget_limited",
  event: GoalEvent
): GoalStep<undefined> => {
  if (Option.isNone(state.goal)) return unchanged(state, undefined)
  const goal = state.goal.value
  if (goal.status !== "active" && !isGoalPaused(goal.status)) return unchanged(state, undefined)
  const finished: GoalOrchestration = {
    ...resetStrategist(withAccounted(goal, state, now)),
    status,
    phase: "idle",
    current_subagent_id: null,
    current_subagent_role: null,
    pause_message: null
  }
  return changed(
    { ...withGoal(state, withHistory(finished, historyEntry(event, now))), activeSince: Option.none() },
    undefined
  )
}

// Applies `f` to the goal when there is one; the shape of every "plain setter" and counter.
const update = <O extends GoalOutput>(
  state: GoalTrackerState,
  absent: O,
  f: (goal: GoalOrchestration) => readonly [GoalTrackerState, O]
): GoalStep<O> => {
  if (Option.isNone(state.goal)) return unchanged(state, absent)
  const [next, output] = f(state.goal.value)
  return changed(next, output)
}

const set = (state: GoalTrackerState, f: (goal: GoalOrchestration) => GoalOrchestration): GoalStep<undefined> =>
  update(state, undefined, (goal) => [withGoal(state, f(goal)), undefined])

const recordHistory = (state: GoalTrackerState, c: Command<"RecordHistory">, now: GoalClock): GoalStep<undefined> => {
  const validRound = c.round === undefined || (Number.isSafeInteger(c.round) && c.round >= 0)
  const validTokens = c.tokensUsed === undefined || Number.isSafeInteger(c.tokensUsed)
  if (!validRound || !validTokens) return unchanged(state, undefined)
  return set(state, (goal) =>
    withHistory(
      goal,
      historyEntry(c.event, now, {
        detail: c.detail ?? null,
        round: c.round ?? null,
        tokens_used: c.tokensUsed ?? null,
        unmet: c.unmet ?? []
      })
    ))
}

const recordClassifierStall = (state: GoalTrackerState, fingerprint: string): GoalStep<boolean> =>
  update(state, false, (goal) => {
    const count = goal.last_gap_fingerprint === fingerprint ? saturatingAdd(goal.classifier_stall_count, 1) : 1
    const threshold = goal.strategist_cap_bonus > 0 ? GOAL_STRATEGIST_STALL_THRESHOLD : GOAL_CLASSIFIER_STALL_THRESHOLD
    const next = withGoal(state, { ...goal, last_gap_fingerprint: fingerprint, classifier_stall_count: count })
    return [next, count >= threshold]
  })

const recordNotAchievedStreak = (state: GoalTrackerState): GoalStep<number> =>
  update(state, 0, (goal) => {
    const streak = saturatingAdd(goal.consecutive_not_achieved, 1)
    return [withGoal(state, { ...goal, consecutive_not_achieved: streak }), streak]
  })

const claimStrategistFire = (
  state: GoalTrackerState,
  c: Command<"ClaimStrategistFire">
): GoalStep<Option.Option<number>> => {
  if (Option.isNone(state.goal)) return unchanged(state, Option.none())
  const goal = state.goal.value
  if (!c.shouldFire(goal.consecutive_not_achieved, goal.last_strategist_fired_at)) {
    return unchanged(state, Option.none())
  }
  const claimed: GoalOrchestration = {
    ...resetStall(goal),
    last_strategist_fired_at: goal.consecutive_not_achieved,
    strategist_cap_bonus: GOAL_STRATEGIST_CAP_BONUS
  }
  return changed(withGoal(state, claimed), Option.some(goal.consecutive_not_achieved))
}

const accountElapsed = (state: GoalTrackerState, now: GoalClock): GoalStep<undefined> => {
  if (Option.isNone(state.goal) || Option.isNone(state.activeSince)) return unchanged(state, undefined)
  // Restarting the timer at `now` is the fix for VT Code's double counting (docs/differences.md#goals): a second call adds only new time.
  return changed(
    { ...withGoal(state, withAccounted(state.goal.value, state, now)), activeSince: Option.some(now.monotonicMs) },
    undefined
  )
}

/** Runs a command that returns whether the goal has stalled (docs/goals.md#goal-tracker counters). */
export function applyGoalCommand(
  state: GoalTrackerState,
  command: Command<"RecordClassifierStall">,
  now: GoalClock
): GoalStep<boolean>
/** Runs a command that returns the new not-achieved streak (0 without a goal). */
export function applyGoalCommand(
  state: GoalTrackerState,
  command: Command<"RecordNotAchievedStreak">,
  now: GoalClock
): GoalStep<number>
/** Runs a command that returns the claimed streak, or none when the predicate declined. */
export function applyGoalCommand(
  state: GoalTrackerState,
  command: Command<"ClaimStrategistFire">,
  now: GoalClock
): GoalStep<Option.Option<number>>
/**
 * Applies one command to the tracker (docs/goals.md#goal-tracker). Pure: `now` is the only source of
 * time, the caller performs `effects` in order and may ignore their errors.
 * **Gotchas**: the running active interval is folded into `elapsed_ms` only by
 * `AccountElapsed`, `Pause`, `Complete` and `BudgetLimit`; account before encoding a
 * snapshot of an active goal, or the interval since the last restart is not persisted.
 */
export function applyGoalCommand(state: GoalTrackerState, command: GoalCommand, now: GoalClock): GoalStep
export function applyGoalCommand(state: GoalTrackerState, command: GoalCommand, now: GoalClock): GoalStep {
  switch (command._tag) {
    case "CreateGoal":
      return createGoal(state, command, now)
    case "Pause":
      return pause(state, command, now)
    case "Resume":
      return resume(state, now)
    case "Complete":
      return finish(state, now, "complete", "goal_completed")
    case "BudgetLimit":
      return finish(state, now, "budget_limited", "budget_exceeded")
    case "Clear":
      return Option.isNone(state.goal) ? unchanged(state, undefined) : changed(emptyGoalTracker, undefined)
    case "SetPhase":
      return set(state, (goal) => ({ ...goal, phase: command.phase }))
    case "SetCurrentSubagent":
      return set(state, (goal) => ({ ...goal, current_subagent_id: command.id, current_subagent_role: command.role }))
    case "SetRuntimeFlag":
      return update(state, undefined, (goal) => [
        { ...withGoal(state, goal), runtime: { ...state.runtime, [command.flag]: command.value } },
        undefined
      ])
    case "RecordHistory":
      return recordHistory(state, command, now)
    case "RecordClassifierStall":
      return recordClassifierStall(state, command.fingerprint)
    case "ResetClassifierStall":
      return set(state, resetStall)
    case "RecordClassifierAttempt":
      return set(state, (goal) => ({
        ...goal,
        classifier_runs_attempted: saturatingAdd(goal.classifier_runs_attempted, 1)
      }))
    case "RollbackClassifierAttempt":
      return set(state, (goal) => ({
        ...goal,
        classifier_runs_attempted: Math.max(0, goal.classifier_runs_attempted - 1)
      }))
    case "RecordNotAchievedStreak":
      return recordNotAchievedStreak(state)
    case "ClaimStrategistFire":
      return claimStrategistFire(state, command)
    case "RevokeStrategistCapBonus":
      return set(state, (goal) => ({ ...goal, strategist_cap_bonus: 0 }))
    case "ResetStrategistState":
      return set(state, resetStrategist)
    case "RecordStrategyRecommendation":
      return set(state, (goal) => ({
        ...goal,
        last_strategy_path: command.path,
        last_strategy_recommendation: command.recommendation
      }))
    case "AccountElapsed":
      return accountElapsed(state, now)
  }
}

/**
 * Restores a tracker from a decoded snapshot (docs/goals.md#restore): a goal
 * caught in planning/executing comes back idle, and paused if it was active, without its
 * subagent; in-flight flags are cleared; the timer runs only if the result is active; a
 * missing or malformed verifier id is replaced by `generateVerifierId()`; history keeps the
 * newest `GOAL_HISTORY_CAP` entries.
 */
export const goalTrackerFromSnapshot = (
  snapshot: GoalSnapshot,
  options: { readonly now: GoalClock; readonly generateVerifierId: () => VerifierId }
): GoalTrackerState => {
  const interrupted = snapshot.phase === "planning" || snapshot.phase === "executing"
  const { verifier_id, ...fields } = snapshot
  const goal: GoalOrchestration = {
    ...fields,
    ...(interrupted
      ? {
        phase: "idle",
        status: snapshot.status === "active" ? "user_paused" : snapshot.status,
        current_subagent_id: null,
        current_subagent_role: null
      }
      : {}),
    history: snapshot.history.slice(-GOAL_HISTORY_CAP),
    verifier_id: verifier_id !== undefined && isVerifierId(verifier_id) ? verifier_id : options.generateVerifierId()
  }
  return {
    goal: Option.some(goal),
    activeSince: goal.status === "active" ? Option.some(options.now.monotonicMs) : Option.none(),
    runtime: idleGoalRuntime
  }
}

const snapshotJson = Schema.fromJsonString(GoalOrchestration)
const encodeSnapshotJson = lazy(() => Schema.encodeSync(snapshotJson))
const decodeSnapshotJson = Schema.decodeUnknownResult(Schema.fromJsonString(GoalSnapshot))

/**
 * The canonical snapshot bytes of a goal: compact JSON, keys in declaration order,
 * null-omitted fields left out, runtime flags never included.
 * **Gotchas**: throws a `SchemaError` only for a hand-built record that violates the
 * schema (reducer output always encodes).
 */
export const encodeGoalSnapshot = (goal: GoalOrchestration): string => encodeSnapshotJson()(goal)

/** Parses snapshot text with the tolerant wire rules; feed the result to `goalTrackerFromSnapshot`. */
export const decodeGoalSnapshotText = (text: string): Result.Result<GoalSnapshot, Schema.SchemaError> =>
  decodeSnapshotJson(text)
