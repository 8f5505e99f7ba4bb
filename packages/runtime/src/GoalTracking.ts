/**
 * The goal tracker and progress ledger of one session as a host service: the pure
 * GoalTracker reducer behind a SynchronizedRef, every applied command persisted (snapshot
 * written, scratch effects run) before it returns, so a crash never loses an acknowledged
 * transition.
 *
 * The goal files are derived state: a goal snapshot that cannot be loaded (corrupt, or an I/O
 * error such as a planted link) never blocks the session that owns it. The tracker then
 * refuses every goal command with that typed error, naming the file, while the canonical log
 * keeps recording.
 */
import type { GoalClock, GoalCommand, GoalStep, GoalTrackerState, ProgressLedger, VerifierId } from "@logbook/domain"
import {
  applyGoalCommand,
  emptyGoalTracker,
  formatRfc3339,
  GoalCommand as Commands,
  goalElapsedAt,
  goalTrackerFromSnapshot,
  verifierIdFromUuid
} from "@logbook/domain"
import type { CorruptFile, IdSource, SessionPaths, StoreIoError } from "@logbook/store"
import {
  applyGoalScratchEffects,
  IdGenerator,
  loadGoalSnapshot,
  loadProgress,
  saveGoalSnapshot,
  saveProgress,
  SessionFs
} from "@logbook/store"
import { Clock, Effect, Option, Result, SynchronizedRef } from "effect"

/** The goal-facing part of a session. */
export interface GoalTracking {
  /** The current tracker state (goal, timer, runtime flags); fails while the goal snapshot is unreadable. */
  readonly state: Effect.Effect<GoalTrackerState, StoreIoError | CorruptFile>
  /** Active time so far, including the interval not yet accounted; fails while the goal snapshot is unreadable. */
  readonly elapsedMs: Effect.Effect<number, StoreIoError | CorruptFile>
  /**
   * Applies one command; when it applied, the snapshot is durable before this returns.
   *
   * **Gotchas**: a failed save leaves the in-memory state unchanged, so memory never runs ahead of disk;
   * while the goal snapshot is unreadable every command fails with that error (nothing is overwritten).
   */
  readonly run: (command: GoalCommand) => Effect.Effect<GoalStep, StoreIoError | CorruptFile>
  /** Creates (or replaces) the goal with a freshly generated verifier id. */
  readonly createGoal: (input: {
    readonly goalId: string
    readonly objective: string
    readonly tokenBudget?: number | null
    readonly tokenBaseline?: number
    readonly baselineCommit?: string | null
  }) => Effect.Effect<GoalStep, StoreIoError | CorruptFile>
  /** The progress ledger, if one was saved. */
  readonly progress: Effect.Effect<Option.Option<ProgressLedger>, StoreIoError | CorruptFile>
  /** Applies `update` to the ledger (given now as RFC 3339) and saves it atomically. */
  readonly updateProgress: (
    update: (ledger: Option.Option<ProgressLedger>, nowIso: string) => ProgressLedger
  ) => Effect.Effect<ProgressLedger, StoreIoError | CorruptFile>
}

const goalClock = Effect.gen(function*() {
  const wallMs = yield* Clock.currentTimeMillis
  const nanos = yield* Clock.currentTimeNanos
  return { wallMs, monotonicMs: Number(nanos / 1_000_000n) } satisfies GoalClock
})

/** A verifier id from the id source (a UUID's first 12 hex digits); retries a malformed source value. */
const freshVerifierId = (ids: IdSource): VerifierId => {
  for (;;) {
    const id = verifierIdFromUuid(ids.uuid())
    if (Option.isSome(id)) return id.value
  }
}

/**
 * Loads the tracker of the session at `paths` (restoring a saved goal per `from_snapshot`).
 * Never fails: a goal snapshot that cannot be loaded leaves a tracker whose every use fails
 * with that error, so the session and its log stay usable.
 */
export const makeGoalTracking = (paths: SessionPaths): Effect.Effect<GoalTracking, never, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const ids = yield* IdGenerator
    const withFs = <A, E>(effect: Effect.Effect<A, E, SessionFs>) => Effect.provideService(effect, SessionFs, fs)
    const loaded = yield* Effect.result(loadGoalSnapshot(paths))
    const now = yield* goalClock
    const initial = Result.isFailure(loaded) ? emptyGoalTracker : Option.match(loaded.success, {
      onNone: () => emptyGoalTracker,
      onSome: (s) => goalTrackerFromSnapshot(s, { now, generateVerifierId: () => freshVerifierId(ids) })
    })
    // The snapshot's load error, reported by every use of the tracker (checked before any write).
    const usable: Effect.Effect<void, StoreIoError | CorruptFile> = Result.isFailure(loaded)
      ? Effect.fail(loaded.failure)
      : Effect.void
    const ref = yield* SynchronizedRef.make(initial)

    const run = Effect.fn("GoalTracking.run")(function*(command: GoalCommand) {
      yield* usable
      return yield* SynchronizedRef.modifyEffect(ref, (state) =>
        Effect.gen(function*() {
          const step = applyGoalCommand(state, command, yield* goalClock)
          if (step.applied) {
            yield* withFs(applyGoalScratchEffects(paths, step.effects))
            yield* withFs(saveGoalSnapshot(paths, step.state.goal))
          }
          return [step, step.state] as const
        }))
    })

    const createGoal: GoalTracking["createGoal"] = (input) =>
      run(Commands.CreateGoal({
        goalId: input.goalId,
        objective: input.objective,
        tokenBudget: input.tokenBudget ?? null,
        tokenBaseline: input.tokenBaseline ?? 0,
        baselineCommit: input.baselineCommit ?? null,
        verifierId: freshVerifierId(ids)
      }))

    const updateProgress = Effect.fn("GoalTracking.updateProgress")(function*(
      update: (ledger: Option.Option<ProgressLedger>, nowIso: string) => ProgressLedger
    ) {
      const current = yield* withFs(loadProgress(paths))
      const nowIso = formatRfc3339(yield* Clock.currentTimeMillis)
      const next = update(current, nowIso)
      yield* withFs(saveProgress(paths, next))
      return next
    })

    return {
      state: Effect.andThen(usable, SynchronizedRef.get(ref)),
      elapsedMs: Effect.andThen(
        usable,
        Effect.flatMap(goalClock, (now) => Effect.map(SynchronizedRef.get(ref), (s) => goalElapsedAt(s, now)))
      ),
      run,
      createGoal,
      progress: withFs(loadProgress(paths)),
      updateProgress
    }
  })
