/**
 * Given/when/then helper and fixtures for the GoalTracker tables: a fixed clock, a goal
 * "in the middle of its life" (every resettable field set) in any status, and
 * `given(state).when(command).then(expected, applied)`.
 */
import { assert } from "@effect/vitest"
import { Option, Schema } from "effect"
import {
  applyGoalCommand,
  emptyGoalTracker,
  GoalCommand,
  idleGoalRuntime,
  VerifierId
} from "../../../src/goals/GoalTracker.ts"
import type {
  GoalClock,
  GoalEvent,
  GoalHistoryEntry,
  GoalOrchestration,
  GoalOutput,
  GoalScratchEffect,
  GoalStatus,
  GoalStep,
  GoalTrackerState
} from "../../../src/goals/GoalTracker.ts"
import { GOAL_STATUS_VALUES } from "../../../src/goals/internal/goalWire.ts"
import { formatRfc3339 } from "../../../src/log/Rfc3339.ts"

/** The instant every table starts at: 2026-01-01T00:00:00Z, monotonic 10 s. */
export const T0: GoalClock = { wallMs: 1_767_225_600_000, monotonicMs: 10_000 }

/** `T0` shifted by `ms` on both clocks. */
export const at = (ms: number): GoalClock => ({ wallMs: T0.wallMs + ms, monotonicMs: T0.monotonicMs + ms })

/** The RFC 3339 history timestamp of `at(ms)`. */
export const iso = (ms: number): string => formatRfc3339(T0.wallMs + ms, "Z")

/** A well-formed verifier id. */
export const VID = Schema.decodeSync(VerifierId)("0123456789ab")

/** Another well-formed verifier id. */
export const VID2 = Schema.decodeSync(VerifierId)("fedcba987654")

/** The create command of the fixtures (override any field). */
export const createCommand = (over: Partial<Parameters<typeof GoalCommand.CreateGoal>[0]> = {}) =>
  GoalCommand.CreateGoal({
    goalId: "goal-1",
    objective: "Build a widget",
    tokenBudget: 100_000,
    tokenBaseline: 250,
    baselineCommit: "abc123",
    verifierId: VID,
    ...over
  })

/** A history entry as the reducer writes it. */
export const entry = (event: GoalEvent, ms: number, detail: string | null = null): GoalHistoryEntry => ({
  timestamp: iso(ms),
  event,
  detail,
  round: null,
  tokens_used: null,
  unmet: []
})

/** The fields a goal starts with at zero or null and a legacy snapshot defaults the same way. */
export const quietGoalFields = {
  pause_message: null,
  classifier_stall_count: 0,
  classifier_runs_attempted: 0,
  rounds_since_verify: 0,
  consecutive_not_achieved: 0,
  last_strategist_fired_at: 0,
  strategist_cap_bonus: 0,
  last_strategy_path: null,
  last_strategy_recommendation: null
} as const

/** The goal `createCommand()` produces at `at(0)`. */
export const freshGoal: GoalOrchestration = {
  goal_id: "goal-1",
  objective: "Build a widget",
  status: "active",
  phase: "executing",
  token_budget: 100_000,
  elapsed_ms: 0,
  created_at: iso(0),
  current_subagent_id: null,
  current_subagent_role: null,
  total_worker_rounds: 0,
  total_verify_rounds: 0,
  token_baseline: 250,
  tokens_used_high_water: 0,
  parent_tokens_spent: 0,
  last_session_tokens_seen: 250,
  history: [entry("goal_created", 0)],
  ...quietGoalFields,
  changes_baseline_commit: "abc123",
  last_gap_fingerprint: null,
  verifier_id: VID
}

/** A goal with every counter, resettable field and the subagent set, so resets are observable. */
export const busyGoal: GoalOrchestration = {
  ...freshGoal,
  elapsed_ms: 500,
  current_subagent_id: "sub-1",
  current_subagent_role: "worker",
  total_worker_rounds: 7,
  total_verify_rounds: 3,
  pause_message: "earlier message",
  classifier_stall_count: 1,
  classifier_runs_attempted: 4,
  rounds_since_verify: 2,
  consecutive_not_achieved: 5,
  last_strategist_fired_at: 3,
  strategist_cap_bonus: 3,
  last_strategy_path: "goal/strategy.md",
  last_strategy_recommendation: "split the task",
  last_gap_fingerprint: "fp-a"
}

/** A tracker holding `goal`; its timer runs (since `at(0)`) exactly when the goal is active. */
export const trackerOf = (goal: GoalOrchestration): GoalTrackerState => ({
  goal: Option.some(goal),
  activeSince: goal.status === "active" ? Option.some(at(0).monotonicMs) : Option.none(),
  runtime: idleGoalRuntime
})

/** `busyGoal` in `status`, held by a tracker. */
export const busyIn = (status: GoalStatus): GoalTrackerState => trackerOf({ ...busyGoal, status })

/** The goal of a tracker (fails the test when there is none). */
export const goalOf = (state: GoalTrackerState): GoalOrchestration =>
  Option.getOrElse(state.goal, () => assert.fail("expected a goal"))

/** `state` with its goal patched (and optionally its timer / runtime replaced). */
export const patched = (
  state: GoalTrackerState,
  patch: Partial<GoalOrchestration>,
  rest: Partial<Omit<GoalTrackerState, "goal">> = {}
): GoalTrackerState => ({ ...state, goal: Option.some({ ...goalOf(state), ...patch }), ...rest })

/** Every status, for tables that try a command from each. */
export const ALL_STATUSES: ReadonlyArray<GoalStatus> = GOAL_STATUS_VALUES

/** What `then` may additionally check: the command's output and its scratch effects (default none). */
export interface Expectations {
  readonly output?: GoalOutput
  readonly effects?: ReadonlyArray<GoalScratchEffect>
}

/**
 * `given(state).when(command, now).then(expected, applied, { output, effects })`: runs one
 * command and asserts the whole next state, the applied flag, the output (undefined unless
 * given) and the effects (none unless given). A command that does not apply must return
 * the very same state object.
 */
export const given = (state: GoalTrackerState) => ({
  when: (command: GoalCommand, now: GoalClock = at(1_000)) => {
    const step: GoalStep = applyGoalCommand(state, command, now)
    return {
      step,
      then: (expected: GoalTrackerState, applied: boolean, expectations: Expectations = {}): GoalStep => {
        assert.strictEqual(step.applied, applied, "applied")
        assert.deepStrictEqual(step.state, expected)
        if (!applied) assert.strictEqual(step.state, state, "a command that does not apply leaves the state as is")
        assert.deepStrictEqual(step.output, expectations.output)
        assert.deepStrictEqual(step.effects, expectations.effects ?? [])
        return step
      }
    }
  }
})

/** A tracker without a goal (re-exported so tables read uniformly). */
export const noGoal: GoalTrackerState = emptyGoalTracker
