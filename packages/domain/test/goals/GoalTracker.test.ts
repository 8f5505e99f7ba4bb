import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Option, Result, Schema } from "effect"
import {
  applyGoalCommand,
  decodeGoalSnapshotText,
  encodeGoalSnapshot,
  GOAL_CLASSIFIER_STALL_THRESHOLD,
  GOAL_HISTORY_CAP,
  GOAL_STRATEGIST_CAP_BONUS,
  GOAL_STRATEGIST_STALL_THRESHOLD,
  GoalCommand,
  goalElapsedAt,
  GoalEvent,
  GoalOrchestration,
  GoalPauseReason,
  GoalPhase,
  GoalSnapshot,
  goalStatusForPause,
  goalTrackerFromSnapshot,
  idleGoalRuntime,
  isGoalPaused,
  isVerifierId,
  VerifierId,
  verifierIdFromUuid
} from "../../src/goals/GoalTracker.ts"
import type { GoalStatus, GoalTrackerState } from "../../src/goals/GoalTracker.ts"
import {
  ALL_STATUSES,
  at,
  busyGoal,
  busyIn,
  createCommand,
  entry,
  freshGoal,
  given,
  goalOf,
  iso,
  noGoal,
  patched,
  quietGoalFields,
  trackerOf,
  VID,
  VID2
} from "./internal/goalGiven.ts"

const VerifierIdOf = Schema.decodeSync(VerifierId)

const PAUSED: ReadonlyArray<GoalStatus> = [
  "user_paused",
  "back_off_paused",
  "no_progress_paused",
  "infra_paused",
  "blocked"
]
const TERMINAL: ReadonlyArray<GoalStatus> = ["complete", "budget_limited"]

// The history detail each pause reason records (docs/goals.md#goal-tracker GoalPauseReason).
const PAUSE_ROWS: ReadonlyArray<readonly [GoalPauseReason, GoalStatus, string]> = [
  ["user", "user_paused", "user"],
  ["back_off", "back_off_paused", "back_off"],
  ["no_progress", "no_progress_paused", "no_progress"],
  ["verification", "blocked", "blocked"],
  ["infra", "infra_paused", "infra"]
]

describe("GoalTracker: create_goal", () => {
  it("creating a goal on an empty tracker starts it active and executing with a running timer", () => {
    given(noGoal).when(createCommand(), at(0)).then(trackerOf(freshGoal), true, { effects: ["create_scratch"] })
  })

  for (const status of ALL_STATUSES) {
    it(`creating a goal over a ${status} goal replaces it, zeroes every counter and swaps the scratch directory`, () => {
      const before: GoalTrackerState = {
        ...busyIn(status),
        runtime: { budget_limit_reported: true, planning_in_flight: true, verifying_in_flight: true }
      }
      const command = createCommand({
        goalId: "goal-2",
        objective: "Ship it",
        tokenBudget: null,
        tokenBaseline: 40,
        baselineCommit: null,
        verifierId: VID2
      })
      const expected = trackerOf({
        ...freshGoal,
        goal_id: "goal-2",
        objective: "Ship it",
        token_budget: null,
        token_baseline: 40,
        last_session_tokens_seen: 40,
        changes_baseline_commit: null,
        created_at: iso(2_000),
        history: [entry("goal_created", 2_000)],
        verifier_id: VID2
      })
      given(before).when(command, at(2_000)).then(
        { ...expected, activeSince: Option.some(at(2_000).monotonicMs) },
        true,
        { effects: ["remove_scratch", "create_scratch"] }
      )
    })
  }

  for (const bad of ["", "0123456789AB", "0123456789a", "0123456789abc", "g123456789ab", "01234-6789ab"]) {
    it(`creating a goal with the malformed verifier id "${bad}" does not apply`, () => {
      given(busyIn("active")).when(createCommand({ verifierId: bad })).then(busyIn("active"), false)
    })
  }

  it("creating a goal with a fractional token budget or baseline does not apply", () => {
    given(noGoal).when(createCommand({ tokenBudget: 1.5 })).then(noGoal, false)
    given(noGoal).when(createCommand({ tokenBaseline: Number.NaN })).then(noGoal, false)
  })
})

describe("GoalTracker: pause", () => {
  for (const [reason, status, detail] of PAUSE_ROWS) {
    it(`pausing an active goal for ${reason} moves it to ${status}, accounts its time and records "${detail}"`, () => {
      given(busyIn("active")).when(GoalCommand.Pause({ reason }), at(1_000)).then(
        patched(busyIn("active"), {
          status,
          elapsed_ms: 1_500,
          history: [...busyGoal.history, entry("goal_paused", 1_000, detail)]
        }, { activeSince: Option.none() }),
        true
      )
      assert.strictEqual(goalStatusForPause(reason), status)
    })
  }

  it("pausing with a message stores the message", () => {
    given(busyIn("active")).when(GoalCommand.Pause({ reason: "infra", message: "Turn failed: rate limit" })).then(
      patched(busyIn("active"), {
        status: "infra_paused",
        elapsed_ms: 1_500,
        pause_message: "Turn failed: rate limit",
        history: [...busyGoal.history, entry("goal_paused", 1_000, "infra")]
      }, { activeSince: Option.none() }),
      true
    )
  })

  it("pausing without a message keeps the message already stored", () => {
    const step = applyGoalCommand(busyIn("active"), GoalCommand.Pause({ reason: "user" }), at(1_000))
    assert.strictEqual(goalOf(step.state).pause_message, "earlier message")
  })

  for (const status of ALL_STATUSES.filter((s) => s !== "active")) {
    it(`pausing a ${status} goal does not apply`, () => {
      given(busyIn(status)).when(GoalCommand.Pause({ reason: "user" })).then(busyIn(status), false)
    })
  }

  it("pausing without a goal does not apply", () => {
    given(noGoal).when(GoalCommand.Pause({ reason: "user" })).then(noGoal, false)
  })
})

describe("GoalTracker: resume", () => {
  for (const status of PAUSED) {
    it(`resuming a ${status} goal makes it active, clears the message and the classifier, strategist and stall state`, () => {
      given(busyIn(status)).when(GoalCommand.Resume(), at(3_000)).then(
        patched(busyIn(status), {
          status: "active",
          ...quietGoalFields,
          last_gap_fingerprint: null,
          history: [...busyGoal.history, entry("goal_resumed", 3_000)]
        }, { activeSince: Option.some(at(3_000).monotonicMs) }),
        true
      )
    })
  }

  for (const status of ["active", ...TERMINAL] as const) {
    it(`resuming a ${status} goal does not apply`, () => {
      given(busyIn(status)).when(GoalCommand.Resume()).then(busyIn(status), false)
    })
  }

  it("resuming without a goal does not apply", () => {
    given(noGoal).when(GoalCommand.Resume()).then(noGoal, false)
  })

  it("the paused set is exactly the five paused statuses including blocked", () => {
    assert.deepStrictEqual(ALL_STATUSES.filter(isGoalPaused), PAUSED)
  })
})

const FINISH_ROWS = [
  { name: "complete", command: GoalCommand.Complete(), status: "complete", event: "goal_completed" },
  { name: "budget_limit", command: GoalCommand.BudgetLimit(), status: "budget_limited", event: "budget_exceeded" }
] as const

for (const row of FINISH_ROWS) {
  describe(`GoalTracker: ${row.name}`, () => {
    for (const from of ["active", ...PAUSED] as const) {
      it(`${row.name} from ${from} sets ${row.status}, idles the phase, clears subagent, message and strategist state`, () => {
        const accounted = from === "active" ? 1_500 : 500
        given(busyIn(from)).when(row.command, at(1_000)).then(
          patched(busyIn(from), {
            status: row.status,
            phase: "idle",
            elapsed_ms: accounted,
            current_subagent_id: null,
            current_subagent_role: null,
            pause_message: null,
            consecutive_not_achieved: 0,
            last_strategist_fired_at: 0,
            strategist_cap_bonus: 0,
            last_strategy_path: null,
            last_strategy_recommendation: null,
            history: [...busyGoal.history, entry(row.event, 1_000)]
          }, { activeSince: Option.none() }),
          true
        )
      })
    }

    for (const from of TERMINAL) {
      it(`${row.name} from ${from} does not apply`, () => {
        given(busyIn(from)).when(row.command).then(busyIn(from), false)
      })
    }

    it(`${row.name} without a goal does not apply`, () => {
      given(noGoal).when(row.command).then(noGoal, false)
    })
  })
}

describe("GoalTracker: clear and plain setters", () => {
  for (const status of ALL_STATUSES) {
    it(`clearing a ${status} goal drops the goal, the timer and the runtime flags`, () => {
      const before = { ...busyIn(status), runtime: { ...idleGoalRuntime, planning_in_flight: true } }
      given(before).when(GoalCommand.Clear()).then(noGoal, true)
    })

    it(`setting the phase and the subagent of a ${status} goal applies as a plain setter`, () => {
      given(busyIn(status)).when(GoalCommand.SetPhase({ phase: "planning" })).then(
        patched(busyIn(status), { phase: "planning" }),
        true
      )
      given(busyIn(status)).when(GoalCommand.SetCurrentSubagent({ id: "sub-9", role: "verifier" })).then(
        patched(busyIn(status), { current_subagent_id: "sub-9", current_subagent_role: "verifier" }),
        true
      )
      given(busyIn(status)).when(GoalCommand.SetCurrentSubagent({ id: null, role: null })).then(
        patched(busyIn(status), { current_subagent_id: null, current_subagent_role: null }),
        true
      )
    })
  }

  it("clearing, setting the phase or the subagent without a goal does not apply", () => {
    given(noGoal).when(GoalCommand.Clear()).then(noGoal, false)
    given(noGoal).when(GoalCommand.SetPhase({ phase: "idle" })).then(noGoal, false)
    given(noGoal).when(GoalCommand.SetCurrentSubagent({ id: "s", role: "r" })).then(noGoal, false)
  })

  it("runtime flags are set on the tracker, not on the persisted goal", () => {
    given(busyIn("active")).when(GoalCommand.SetRuntimeFlag({ flag: "verifying_in_flight", value: true })).then(
      { ...busyIn("active"), runtime: { ...idleGoalRuntime, verifying_in_flight: true } },
      true
    )
    given(noGoal).when(GoalCommand.SetRuntimeFlag({ flag: "planning_in_flight", value: true })).then(noGoal, false)
  })

  it("recording a history event appends it with the given details and the current wall time", () => {
    given(busyIn("active")).when(
      GoalCommand.RecordHistory({ event: "worker_completed", detail: "w1", round: 3, tokensUsed: -12, unmet: ["a"] }),
      at(4_000)
    ).then(
      patched(busyIn("active"), {
        history: [...busyGoal.history, {
          timestamp: iso(4_000),
          event: "worker_completed",
          detail: "w1",
          round: 3,
          tokens_used: -12,
          unmet: ["a"]
        }]
      }),
      true
    )
  })

  it("recording a history event with a negative or fractional round does not apply", () => {
    given(busyIn("active")).when(GoalCommand.RecordHistory({ event: "worker_started", round: -1 })).then(
      busyIn("active"),
      false
    )
    given(busyIn("active")).when(GoalCommand.RecordHistory({ event: "worker_started", tokensUsed: 0.5 })).then(
      busyIn("active"),
      false
    )
  })

  it(`history keeps the newest ${GOAL_HISTORY_CAP} entries, dropping the oldest first`, () => {
    let state = trackerOf(freshGoal)
    for (let i = 1; i <= GOAL_HISTORY_CAP + 5; i++) {
      state = applyGoalCommand(state, GoalCommand.RecordHistory({ event: "worker_started", round: i }), at(i)).state
    }
    const history = goalOf(state).history
    assert.strictEqual(history.length, GOAL_HISTORY_CAP)
    assert.strictEqual(history[0]?.round, 6)
    assert.strictEqual(history[GOAL_HISTORY_CAP - 1]?.round, GOAL_HISTORY_CAP + 5)
  })
})

describe("GoalTracker: classifier stall counters", () => {
  const stall = (fingerprint: string) => GoalCommand.RecordClassifierStall({ fingerprint })
  const base = trackerOf(freshGoal)

  it("the first fingerprint is not a stall, the same one again is", () => {
    const first = given(base).when(stall("fp-a")).then(
      patched(base, { last_gap_fingerprint: "fp-a", classifier_stall_count: 1 }),
      true,
      { output: false }
    )
    given(first.state).when(stall("fp-a")).then(
      patched(base, { last_gap_fingerprint: "fp-a", classifier_stall_count: 2 }),
      true,
      { output: true }
    )
  })

  it("a different fingerprint restarts the count at 1", () => {
    const twice = patched(base, { last_gap_fingerprint: "fp-a", classifier_stall_count: 2 })
    given(twice).when(stall("fp-b")).then(
      patched(base, { last_gap_fingerprint: "fp-b", classifier_stall_count: 1 }),
      true,
      { output: false }
    )
  })

  it(`while the strategist bonus is active the threshold relaxes from ${GOAL_CLASSIFIER_STALL_THRESHOLD} to ${GOAL_STRATEGIST_STALL_THRESHOLD}`, () => {
    assert.strictEqual(GOAL_STRATEGIST_STALL_THRESHOLD, 5)
    let state = patched(base, { strategist_cap_bonus: GOAL_STRATEGIST_CAP_BONUS })
    const outputs: Array<boolean> = []
    for (let i = 0; i < 5; i++) {
      const step = applyGoalCommand(state, stall("fp-a"), at(i))
      outputs.push(step.output)
      state = step.state
    }
    assert.deepStrictEqual(outputs, [false, false, false, false, true])
  })

  it("a stall record without a goal reports no stall and does not apply", () => {
    given(noGoal).when(stall("fp-a")).then(noGoal, false, { output: false })
  })

  it("resetting the stall clears the count and the fingerprint", () => {
    given(busyIn("active")).when(GoalCommand.ResetClassifierStall()).then(
      patched(busyIn("active"), { classifier_stall_count: 0, last_gap_fingerprint: null }),
      true
    )
  })

  it("a classifier attempt counts up and a rollback counts down, saturating at zero", () => {
    given(base).when(GoalCommand.RecordClassifierAttempt()).then(
      patched(base, { classifier_runs_attempted: 1 }),
      true
    )
    given(busyIn("active")).when(GoalCommand.RollbackClassifierAttempt()).then(
      patched(busyIn("active"), { classifier_runs_attempted: 3 }),
      true
    )
    given(base).when(GoalCommand.RollbackClassifierAttempt()).then(base, true)
  })

  it("stall reset and attempt counters without a goal do not apply", () => {
    given(noGoal).when(GoalCommand.ResetClassifierStall()).then(noGoal, false)
    given(noGoal).when(GoalCommand.RecordClassifierAttempt()).then(noGoal, false)
    given(noGoal).when(GoalCommand.RollbackClassifierAttempt()).then(noGoal, false)
  })
})

describe("GoalTracker: strategist counters", () => {
  const base = trackerOf(freshGoal)

  it("the not-achieved streak counts up and returns the new value", () => {
    const one = given(base).when(GoalCommand.RecordNotAchievedStreak()).then(
      patched(base, { consecutive_not_achieved: 1 }),
      true,
      { output: 1 }
    )
    given(one.state).when(GoalCommand.RecordNotAchievedStreak()).then(
      patched(base, { consecutive_not_achieved: 2 }),
      true,
      { output: 2 }
    )
  })

  it("the not-achieved streak is 0 without a goal", () => {
    given(noGoal).when(GoalCommand.RecordNotAchievedStreak()).then(noGoal, false, { output: 0 })
  })

  it("a claimed strategist fire marks the streak, grants the cap bonus, resets the stall and returns the streak", () => {
    const seen: Array<readonly [number, number]> = []
    const command = GoalCommand.ClaimStrategistFire({
      shouldFire: (streak, firedAt) => {
        seen.push([streak, firedAt])
        return true
      }
    })
    given(busyIn("active")).when(command).then(
      patched(busyIn("active"), {
        last_strategist_fired_at: 5,
        strategist_cap_bonus: GOAL_STRATEGIST_CAP_BONUS,
        classifier_stall_count: 0,
        last_gap_fingerprint: null
      }),
      true,
      { output: Option.some(5) }
    )
    assert.deepStrictEqual(seen, [[5, 3]])
  })

  it("a declined strategist fire returns none and changes nothing", () => {
    const command = GoalCommand.ClaimStrategistFire({ shouldFire: () => false })
    given(busyIn("active")).when(command).then(busyIn("active"), false, { output: Option.none() })
  })

  it("a strategist claim without a goal returns none without asking the predicate", () => {
    const command = GoalCommand.ClaimStrategistFire({ shouldFire: () => assert.fail("predicate called") })
    given(noGoal).when(command).then(noGoal, false, { output: Option.none() })
  })

  it("revoking the bonus zeroes only the bonus; resetting the strategist zeroes streak, marker, bonus and strategy", () => {
    given(busyIn("active")).when(GoalCommand.RevokeStrategistCapBonus()).then(
      patched(busyIn("active"), { strategist_cap_bonus: 0 }),
      true
    )
    given(busyIn("active")).when(GoalCommand.ResetStrategistState()).then(
      patched(busyIn("active"), {
        consecutive_not_achieved: 0,
        last_strategist_fired_at: 0,
        strategist_cap_bonus: 0,
        last_strategy_path: null,
        last_strategy_recommendation: null
      }),
      true
    )
  })

  it("recording a strategy recommendation stores its path and text", () => {
    given(base).when(GoalCommand.RecordStrategyRecommendation({ path: "goal/s.md", recommendation: "retry" })).then(
      patched(base, { last_strategy_path: "goal/s.md", last_strategy_recommendation: "retry" }),
      true
    )
  })

  it("strategist commands without a goal do not apply", () => {
    given(noGoal).when(GoalCommand.RevokeStrategistCapBonus()).then(noGoal, false)
    given(noGoal).when(GoalCommand.ResetStrategistState()).then(noGoal, false)
    given(noGoal).when(GoalCommand.RecordStrategyRecommendation({ path: "p", recommendation: "r" })).then(
      noGoal,
      false
    )
  })
})

describe("GoalTracker: elapsed time", () => {
  it("accounting adds the time since the timer started and restarts the timer", () => {
    given(busyIn("active")).when(GoalCommand.AccountElapsed(), at(1_000)).then(
      patched(busyIn("active"), { elapsed_ms: 1_500 }, { activeSince: Option.some(at(1_000).monotonicMs) }),
      true
    )
  })

  it("accounting twice at the same instant counts the interval once", () => {
    const once = applyGoalCommand(busyIn("active"), GoalCommand.AccountElapsed(), at(1_000)).state
    given(once).when(GoalCommand.AccountElapsed(), at(1_000)).then(once, true)
    assert.strictEqual(goalOf(once).elapsed_ms, 1_500)
  })

  it("pausing after accounting adds only the time since the last account", () => {
    const once = applyGoalCommand(busyIn("active"), GoalCommand.AccountElapsed(), at(1_000)).state
    const paused = applyGoalCommand(once, GoalCommand.Pause({ reason: "user" }), at(1_200)).state
    assert.strictEqual(goalOf(paused).elapsed_ms, 1_700)
  })

  it("accounting a paused goal or no goal does not apply", () => {
    given(busyIn("user_paused")).when(GoalCommand.AccountElapsed()).then(busyIn("user_paused"), false)
    given(noGoal).when(GoalCommand.AccountElapsed()).then(noGoal, false)
  })

  it("a monotonic clock that went backwards adds nothing", () => {
    given(busyIn("active")).when(GoalCommand.AccountElapsed(), at(-400)).then(
      patched(busyIn("active"), {}, { activeSince: Option.some(at(-400).monotonicMs) }),
      true
    )
  })

  it("wall-clock jumps do not change the accounted time", () => {
    const now = { wallMs: at(0).wallMs - 86_400_000, monotonicMs: at(250).monotonicMs }
    const step = applyGoalCommand(busyIn("active"), GoalCommand.AccountElapsed(), now)
    assert.strictEqual(goalOf(step.state).elapsed_ms, 750)
  })

  it("the elapsed time at an instant includes the running interval without changing the state", () => {
    assert.strictEqual(goalElapsedAt(busyIn("active"), at(300)), 800)
    assert.strictEqual(goalElapsedAt(busyIn("user_paused"), at(300)), 500)
    assert.strictEqual(goalElapsedAt(noGoal, at(300)), 0)
  })

  it("the verifier id survives pause, resume and completion", () => {
    const commands = [
      GoalCommand.Pause({ reason: "back_off" }),
      GoalCommand.Resume(),
      GoalCommand.RecordClassifierStall({ fingerprint: "x" }),
      GoalCommand.Complete()
    ]
    let state = applyGoalCommand(noGoal, createCommand({ verifierId: VID }), at(0)).state
    for (const [i, command] of commands.entries()) {
      state = applyGoalCommand(state, command, at(i + 1)).state
      assert.strictEqual(goalOf(state).verifier_id, VID)
    }
  })
})

const okDecode = (text: string): GoalSnapshot =>
  Result.match(decodeGoalSnapshotText(text), {
    onFailure: (error) => assert.fail(`expected ${text} to decode: ${error.message}`),
    onSuccess: (snapshot) => snapshot
  })

const generateVid2 = () => VID2
const restore = (snapshot: GoalSnapshot) =>
  goalTrackerFromSnapshot(snapshot, { now: at(7_000), generateVerifierId: generateVid2 })

// A snapshot as an old shell wrote it: PascalCase values, only the fields without serde defaults.
const legacyText = (over: Record<string, unknown> = {}): string =>
  JSON.stringify({
    goal_id: "g-legacy",
    objective: "Port the parser",
    status: "Active",
    phase: "Idle",
    token_budget: null,
    elapsed_ms: 42,
    created_at: "2025-06-01T12:00:00Z",
    current_subagent_id: null,
    current_subagent_role: null,
    history: [],
    ...over
  })

describe("GoalTracker: snapshot wire format", () => {
  it("a fresh goal encodes to the canonical compact JSON with null-omitted fields left out", () => {
    assert.strictEqual(
      encodeGoalSnapshot(freshGoal),
      "{\"goal_id\":\"goal-1\",\"objective\":\"Build a widget\",\"status\":\"active\",\"phase\":\"executing\"," +
        "\"token_budget\":100000,\"elapsed_ms\":0,\"created_at\":\"2026-01-01T00:00:00.000Z\"," +
        "\"current_subagent_id\":null,\"current_subagent_role\":null,\"total_worker_rounds\":0," +
        "\"total_verify_rounds\":0,\"token_baseline\":250,\"tokens_used_high_water\":0,\"parent_tokens_spent\":0," +
        "\"last_session_tokens_seen\":250," +
        "\"history\":[{\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"event\":\"goal_created\"}]," +
        "\"classifier_stall_count\":0,\"classifier_runs_attempted\":0,\"rounds_since_verify\":0," +
        "\"consecutive_not_achieved\":0,\"last_strategist_fired_at\":0,\"strategist_cap_bonus\":0," +
        "\"changes_baseline_commit\":\"abc123\",\"verifier_id\":\"0123456789ab\"}"
    )
  })

  it("a goal with every optional field set writes them in declaration order with verifier_id last", () => {
    const goal = {
      ...busyGoal,
      history: [{ timestamp: "t", event: "worker_completed", detail: "d", round: 1, tokens_used: 9, unmet: ["x"] }]
    } as const
    const keys = Object.keys(JSON.parse(encodeGoalSnapshot(goal)))
    assert.deepStrictEqual(keys, [
      "goal_id",
      "objective",
      "status",
      "phase",
      "token_budget",
      "elapsed_ms",
      "created_at",
      "current_subagent_id",
      "current_subagent_role",
      "total_worker_rounds",
      "total_verify_rounds",
      "token_baseline",
      "tokens_used_high_water",
      "parent_tokens_spent",
      "last_session_tokens_seen",
      "history",
      "pause_message",
      "classifier_stall_count",
      "classifier_runs_attempted",
      "rounds_since_verify",
      "consecutive_not_achieved",
      "last_strategist_fired_at",
      "strategist_cap_bonus",
      "last_strategy_path",
      "last_strategy_recommendation",
      "changes_baseline_commit",
      "last_gap_fingerprint",
      "verifier_id"
    ])
    assert.include(
      encodeGoalSnapshot(goal),
      "{\"timestamp\":\"t\",\"event\":\"worker_completed\",\"detail\":\"d\",\"round\":1,\"tokens_used\":9,\"unmet\":[\"x\"]}"
    )
  })

  it("runtime-only flags are never persisted", () => {
    let state = trackerOf(freshGoal)
    for (const flag of ["budget_limit_reported", "planning_in_flight", "verifying_in_flight"] as const) {
      state = applyGoalCommand(state, GoalCommand.SetRuntimeFlag({ flag, value: true }), at(1)).state
    }
    const text = encodeGoalSnapshot(goalOf(state))
    assert.strictEqual(text, encodeGoalSnapshot(freshGoal))
    assert.notInclude(text, "in_flight")
    assert.notInclude(text, "budget_limit_reported")
  })

  const STATUS_SPELLINGS: ReadonlyArray<readonly [string, GoalStatus]> = [
    ["active", "active"],
    ["Active", "active"],
    ["user_paused", "user_paused"],
    ["paused", "user_paused"],
    ["Paused", "user_paused"],
    ["doom_loop_paused", "user_paused"],
    ["back_off_paused", "back_off_paused"],
    ["no_progress_paused", "no_progress_paused"],
    ["infra_paused", "infra_paused"],
    ["blocked", "blocked"],
    ["budget_limited", "budget_limited"],
    ["BudgetLimited", "budget_limited"],
    ["complete", "complete"],
    ["Complete", "complete"],
    ["error_paused", "user_paused"],
    ["quarantined", "user_paused"],
    ["v9_super_active", "user_paused"],
    ["", "user_paused"],
    ["ACTIVE", "user_paused"],
    ["BackOffPaused", "user_paused"],
    ["constructor", "user_paused"],
    ["__proto__", "user_paused"]
  ]
  for (const [wire, status] of STATUS_SPELLINGS) {
    it(`the status "${wire}" decodes as ${status}`, () => {
      assert.strictEqual(okDecode(legacyText({ status: wire })).status, status)
    })
  }

  const PHASE_SPELLINGS: ReadonlyArray<readonly [string, GoalPhase]> = [
    ["idle", "idle"],
    ["Idle", "idle"],
    ["planning", "planning"],
    ["Planning", "planning"],
    ["executing", "executing"],
    ["Executing", "executing"],
    ["Verifying", "executing"],
    ["IDLE", "executing"]
  ]
  for (const [wire, phase] of PHASE_SPELLINGS) {
    it(`the phase "${wire}" decodes as ${phase}`, () => {
      assert.strictEqual(okDecode(legacyText({ phase: wire })).phase, phase)
    })
  }

  it("an unknown history event decodes as unknown and omitted entry fields read as null or empty", () => {
    const snapshot = okDecode(legacyText({
      history: [{ timestamp: "t1", event: "some_future_event", round: 2 }, {
        timestamp: "t2",
        event: "goal_paused",
        detail: null,
        unmet: []
      }]
    }))
    assert.deepStrictEqual(snapshot.history, [
      { timestamp: "t1", event: "unknown", detail: null, round: 2, tokens_used: null, unmet: [] },
      { timestamp: "t2", event: "goal_paused", detail: null, round: null, tokens_used: null, unmet: [] }
    ])
  })

  it("a legacy snapshot gets every serde default and re-encodes canonically", () => {
    const snapshot = okDecode(legacyText({ current_subagent_role: undefined, token_budget: undefined }))
    assert.deepStrictEqual(snapshot, {
      goal_id: "g-legacy",
      objective: "Port the parser",
      status: "active",
      phase: "idle",
      token_budget: null,
      elapsed_ms: 42,
      created_at: "2025-06-01T12:00:00Z",
      current_subagent_id: null,
      current_subagent_role: null,
      total_worker_rounds: 0,
      total_verify_rounds: 0,
      token_baseline: 0,
      tokens_used_high_water: 0,
      parent_tokens_spent: 0,
      last_session_tokens_seen: null,
      history: [],
      ...quietGoalFields,
      changes_baseline_commit: null,
      last_gap_fingerprint: null
    })
    assert.strictEqual(
      encodeGoalSnapshot(goalOf(restore(snapshot))),
      "{\"goal_id\":\"g-legacy\",\"objective\":\"Port the parser\",\"status\":\"active\",\"phase\":\"idle\"," +
        "\"token_budget\":null,\"elapsed_ms\":42,\"created_at\":\"2025-06-01T12:00:00Z\"," +
        "\"current_subagent_id\":null,\"current_subagent_role\":null,\"total_worker_rounds\":0," +
        "\"total_verify_rounds\":0,\"token_baseline\":0,\"tokens_used_high_water\":0,\"parent_tokens_spent\":0," +
        "\"last_session_tokens_seen\":null,\"history\":[],\"classifier_stall_count\":0," +
        "\"classifier_runs_attempted\":0,\"rounds_since_verify\":0,\"consecutive_not_achieved\":0," +
        "\"last_strategist_fired_at\":0,\"strategist_cap_bonus\":0,\"verifier_id\":\"fedcba987654\"}"
    )
  })

  for (const field of ["goal_id", "objective", "status", "phase", "elapsed_ms", "created_at", "history"]) {
    it(`a snapshot without ${field} does not decode`, () => {
      assert.isTrue(Result.isFailure(decodeGoalSnapshotText(legacyText({ [field]: undefined }))))
    })
  }

  it("a snapshot with a non-string status, a negative counter or broken JSON does not decode", () => {
    assert.isTrue(Result.isFailure(decodeGoalSnapshotText(legacyText({ status: 1 }))))
    assert.isTrue(Result.isFailure(decodeGoalSnapshotText(legacyText({ elapsed_ms: -1 }))))
    assert.isTrue(Result.isFailure(decodeGoalSnapshotText(legacyText({ classifier_stall_count: 1.5 }))))
    assert.isTrue(Result.isFailure(decodeGoalSnapshotText("{\"goal_id\":")))
  })
})

describe("GoalTracker: restoring a snapshot", () => {
  const subagent = { current_subagent_id: "sub-1", current_subagent_role: "worker" }
  const ROWS: ReadonlyArray<
    readonly [wireStatus: string, wirePhase: string, status: GoalStatus, keepsSubagent: boolean, timer: boolean]
  > = [
    ["active", "idle", "active", true, true],
    ["Active", "Idle", "active", true, true],
    ["active", "executing", "user_paused", false, false],
    ["Active", "Planning", "user_paused", false, false],
    ["active", "Verifying", "user_paused", false, false],
    ["blocked", "planning", "blocked", false, false],
    ["infra_paused", "idle", "infra_paused", true, false],
    ["complete", "executing", "complete", false, false],
    ["BudgetLimited", "Idle", "budget_limited", true, false],
    ["mystery", "idle", "user_paused", true, false]
  ]
  for (const [wireStatus, wirePhase, status, keepsSubagent, timer] of ROWS) {
    it(`a ${wireStatus} goal in phase ${wirePhase} restores ${status} and idle${timer ? " with its timer running" : ""}`, () => {
      const state = restore(okDecode(legacyText({ status: wireStatus, phase: wirePhase, ...subagent })))
      const goal = goalOf(state)
      assert.strictEqual(goal.status, status)
      assert.strictEqual(goal.phase, "idle")
      assert.strictEqual(goal.current_subagent_id, keepsSubagent ? "sub-1" : null)
      assert.strictEqual(goal.current_subagent_role, keepsSubagent ? "worker" : null)
      assert.deepStrictEqual(state.activeSince, timer ? Option.some(at(7_000).monotonicMs) : Option.none())
      assert.deepStrictEqual(state.runtime, idleGoalRuntime)
    })
  }

  it("a valid verifier id is kept and the generator is not asked", () => {
    const snapshot = okDecode(legacyText({ verifier_id: "00aa11bb22cc" }))
    const state = goalTrackerFromSnapshot(snapshot, {
      now: at(0),
      generateVerifierId: () => assert.fail("generator called")
    })
    assert.strictEqual(goalOf(state).verifier_id, "00aa11bb22cc")
  })

  for (const wire of [undefined, "", "00AA11BB22CC", "00aa11bb22c", "00aa11bb22ccd", "00aa11bb22cz"]) {
    it(`a verifier id of ${JSON.stringify(wire) ?? "nothing"} is regenerated`, () => {
      assert.strictEqual(goalOf(restore(okDecode(legacyText({ verifier_id: wire })))).verifier_id, VID2)
    })
  }

  it(`a restored history keeps only the newest ${GOAL_HISTORY_CAP} entries`, () => {
    const history = Array.from(
      { length: GOAL_HISTORY_CAP + 6 },
      (_, i) => ({ timestamp: `t${i}`, event: "worker_started" })
    )
    const restored = goalOf(restore(okDecode(legacyText({ history })))).history
    assert.strictEqual(restored.length, GOAL_HISTORY_CAP)
    assert.strictEqual(restored[0]?.timestamp, "t6")
  })

  it("a verifier id comes from the first 12 hex digits of a UUID", () => {
    assert.deepStrictEqual(
      verifierIdFromUuid("3F2504E0-4F89-41D3-9A0C-0305E82C3301"),
      Option.some(VerifierIdOf("3f2504e04f89"))
    )
    assert.deepStrictEqual(
      verifierIdFromUuid("3f2504e04f8941d39a0c0305e82c3301"),
      Option.some(VerifierIdOf("3f2504e04f89"))
    )
    assert.deepStrictEqual(verifierIdFromUuid("not-a-uuid"), Option.none())
    assert.deepStrictEqual(verifierIdFromUuid("3f2504e04f8941d39a0c0305e82c33"), Option.none())
  })
})

// ---------------------------------------------------------------------------------------------
// Properties

const TAGS = [
  "CreateGoal",
  "Pause",
  "Resume",
  "Complete",
  "BudgetLimit",
  "Clear",
  "SetPhase",
  "SetCurrentSubagent",
  "SetRuntimeFlag",
  "RecordHistory",
  "RecordClassifierStall",
  "ResetClassifierStall",
  "RecordClassifierAttempt",
  "RollbackClassifierAttempt",
  "RecordNotAchievedStreak",
  "ClaimStrategistFire",
  "RevokeStrategistCapBonus",
  "ResetStrategistState",
  "RecordStrategyRecommendation",
  "AccountElapsed"
] as const satisfies ReadonlyArray<GoalCommand["_tag"]>

const StepInput = Schema.Struct({
  tag: Schema.Literals(TAGS),
  dt: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5_000 })),
  reason: GoalPauseReason,
  phase: GoalPhase,
  fingerprint: Schema.Literals(["fp-a", "fp-b"]),
  choice: Schema.Boolean,
  flag: Schema.Literals(["budget_limit_reported", "planning_in_flight", "verifying_in_flight"]),
  event: GoalEvent
})

const toCommand = (s: typeof StepInput.Type): GoalCommand => {
  switch (s.tag) {
    case "CreateGoal":
      return createCommand({ verifierId: s.choice ? VID : VID2 })
    case "Pause":
      return GoalCommand.Pause(s.choice ? { reason: s.reason, message: "why" } : { reason: s.reason })
    case "Resume":
      return GoalCommand.Resume()
    case "Complete":
      return GoalCommand.Complete()
    case "BudgetLimit":
      return GoalCommand.BudgetLimit()
    case "Clear":
      return GoalCommand.Clear()
    case "SetPhase":
      return GoalCommand.SetPhase({ phase: s.phase })
    case "SetCurrentSubagent":
      return GoalCommand.SetCurrentSubagent(s.choice ? { id: "sub", role: "worker" } : { id: null, role: null })
    case "SetRuntimeFlag":
      return GoalCommand.SetRuntimeFlag({ flag: s.flag, value: s.choice })
    case "RecordHistory":
      return GoalCommand.RecordHistory({ event: s.event })
    case "RecordClassifierStall":
      return GoalCommand.RecordClassifierStall({ fingerprint: s.fingerprint })
    case "ResetClassifierStall":
      return GoalCommand.ResetClassifierStall()
    case "RecordClassifierAttempt":
      return GoalCommand.RecordClassifierAttempt()
    case "RollbackClassifierAttempt":
      return GoalCommand.RollbackClassifierAttempt()
    case "RecordNotAchievedStreak":
      return GoalCommand.RecordNotAchievedStreak()
    case "ClaimStrategistFire":
      return GoalCommand.ClaimStrategistFire({ shouldFire: () => s.choice })
    case "RevokeStrategistCapBonus":
      return GoalCommand.RevokeStrategistCapBonus()
    case "ResetStrategistState":
      return GoalCommand.ResetStrategistState()
    case "RecordStrategyRecommendation":
      return GoalCommand.RecordStrategyRecommendation({ path: "p", recommendation: "r" })
    case "AccountElapsed":
      return GoalCommand.AccountElapsed()
  }
}

const isCount = (n: number) => Number.isSafeInteger(n) && n >= 0
const sameSnapshot = Schema.toEquivalence(GoalSnapshot)

const assertValid = (state: GoalTrackerState): void => {
  if (Option.isNone(state.goal)) {
    assert.deepStrictEqual(state, noGoal)
    return
  }
  const goal = state.goal.value
  assert.strictEqual(Option.isSome(state.activeSince), goal.status === "active", "the timer runs exactly while active")
  assert.isTrue(isVerifierId(goal.verifier_id))
  assert.isAtLeast(goal.history.length, 1)
  assert.isAtMost(goal.history.length, GOAL_HISTORY_CAP)
  for (
    const n of [
      goal.elapsed_ms,
      goal.classifier_stall_count,
      goal.classifier_runs_attempted,
      goal.consecutive_not_achieved,
      goal.last_strategist_fired_at,
      goal.strategist_cap_bonus
    ]
  ) assert.isTrue(isCount(n))
  assert.strictEqual(goal.classifier_stall_count === 0, goal.last_gap_fingerprint === null)
  assert.include([0, GOAL_STRATEGIST_CAP_BONUS], goal.strategist_cap_bonus)
  assert.isAtMost(goal.last_strategist_fired_at, goal.consecutive_not_achieved)
  if (goal.status === "complete" || goal.status === "budget_limited") assert.isNull(goal.pause_message)
  assert.isTrue(sameSnapshot(okDecode(encodeGoalSnapshot(goal)), goal), "every reachable goal round-trips")
}

describe("GoalTracker: properties", () => {
  it.prop(
    "random command sequences keep the tracker valid, terminal statuses absorbing and active time counted once",
    { steps: Arbitrary.array(Arbitrary.schema(StepInput), { minLength: 10, maxLength: 80 }) },
    ({ steps }) => {
      let state = noGoal
      let clock = 0
      let activeMs = 0
      for (const input of steps) {
        const before = state
        const previous = Option.getOrNull(before.goal)
        clock += input.dt
        if (previous?.status === "active") activeMs += input.dt
        const command = toCommand(input)
        const step = applyGoalCommand(before, command, at(clock))
        state = step.state
        if (!step.applied) assert.strictEqual(state, before)
        if (command._tag === "CreateGoal") activeMs = 0
        assertValid(state)
        const replaces = command._tag === "CreateGoal" || command._tag === "Clear"
        if (previous !== null && !replaces) {
          const goal = goalOf(state)
          if (previous.status === "complete" || previous.status === "budget_limited") {
            assert.strictEqual(goal.status, previous.status, "complete and budget_limited are absorbing")
          }
          assert.isAtLeast(goal.elapsed_ms, previous.elapsed_ms, "elapsed time never shrinks")
          assert.strictEqual(goal.verifier_id, previous.verifier_id, "the verifier id is stable")
        }
        if (Option.isSome(state.goal)) assert.strictEqual(goalElapsedAt(state, at(clock)), activeMs)
      }
      const accounted = applyGoalCommand(state, GoalCommand.AccountElapsed(), at(clock + 10)).state
      const again = applyGoalCommand(accounted, GoalCommand.AccountElapsed(), at(clock + 10)).state
      if (Option.isSome(state.goal)) {
        const expected = activeMs + (goalOf(state).status === "active" ? 10 : 0)
        assert.strictEqual(goalOf(accounted).elapsed_ms, expected, "accounted time equals active wall time")
        assert.strictEqual(goalOf(again).elapsed_ms, expected, "accounting again adds nothing")
      }
    },
    { arbitrary: { runs: 200, size: 80 } }
  )

  it.prop("encoding then decoding any goal gives the same goal", [GoalOrchestration], ([goal]) => {
    const decoded = okDecode(encodeGoalSnapshot(goal))
    assert.isTrue(sameSnapshot(decoded, goal))
    assert.strictEqual(decoded.verifier_id, goal.verifier_id)
  })

  const statusSpelling = Arbitrary.schema(
    Schema.Union([Schema.Literals(["active", "Active", "paused", "Paused", "complete", "blocked"]), Schema.String])
  )
  const phaseSpelling = Arbitrary.schema(
    Schema.Union([Schema.Literals(["idle", "Idle", "planning", "Planning", "executing", "Executing"]), Schema.String])
  )
  const verifierSpelling = Arbitrary.schema(
    Schema.Union([Schema.Literals(["00aa11bb22cc", "00AA11BB22CC"]), Schema.String, Schema.Null])
  )
  const wireSnapshot = Arbitrary.all({
    base: Arbitrary.schema(Schema.toEncoded(GoalSnapshot)),
    status: statusSpelling,
    phase: phaseSpelling,
    verifier: verifierSpelling
  })

  it.prop(
    "restoring any wire snapshot never yields a self-driving goal",
    { wire: wireSnapshot },
    ({ wire }) => {
      const { verifier_id: _ignored, ...base } = wire.base
      const text = JSON.stringify({
        ...base,
        status: wire.status,
        phase: wire.phase,
        ...(wire.verifier === null ? {} : { verifier_id: wire.verifier })
      })
      const state = restore(okDecode(text))
      const goal = goalOf(state)
      assert.strictEqual(goal.phase, "idle", "a restored goal is never mid-planning or mid-execution")
      if (goal.status === "active") {
        assert.include(["active", "Active"], wire.status)
        assert.include(["idle", "Idle"], wire.phase)
      }
      assert.strictEqual(Option.isSome(state.activeSince), goal.status === "active")
      assert.deepStrictEqual(state.runtime, idleGoalRuntime)
      assert.isTrue(isVerifierId(goal.verifier_id))
      if (wire.verifier === "00aa11bb22cc") assert.strictEqual(goal.verifier_id, "00aa11bb22cc")
      assert.isAtMost(goal.history.length, GOAL_HISTORY_CAP)
      if (!["idle", "Idle"].includes(wire.phase)) {
        assert.isNull(goal.current_subagent_id)
        assert.isNull(goal.current_subagent_role)
      }
    },
    { arbitrary: { size: 24 } }
  )
})
