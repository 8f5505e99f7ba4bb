/**
 * Persistence of a session's goal-tracker snapshot (`derived/goal.json`) and ProgressLedger
 * (`derived/progress.json`, docs/format.md#goal-and-progress, docs/goals.md) with atomic private writes (docs/differences.md),
 * plus the `<session>/goal` scratch directory the tracker's effects ask for.
 */
import type { GoalOrchestration, GoalScratchEffect, GoalSnapshot, ProgressLedger } from "@logbook/domain"
import {
  decodeGoalSnapshotText,
  decodeProgressText,
  encodeGoalSnapshot,
  encodeProgress,
  GOAL_SCRATCH_DIR
} from "@logbook/domain"
import { Effect, Option, Result, Schema } from "effect"
import * as NodePath from "node:path"
import { SessionFs } from "../fs/SessionFs.ts"
import type { StoreIoError } from "../fs/StoreError.ts"
import type { SessionPaths } from "../log/SessionPaths.ts"

/** A store file exists but does not parse; the message names the file and what to do. */
export class CorruptFile extends Schema.TaggedError<CorruptFile>()("CorruptFile", {
  operation: Schema.String,
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.path} is corrupt (${this.operation}): ${this.detail}; ` +
      `move it aside to start fresh, or restore it from a backup`
  }
}

/** Where the ProgressLedger lives. */
export const progressPath = (paths: SessionPaths): string => NodePath.join(paths.derivedDir, "progress.json")

/** Where the goal-tracker snapshot lives. */
export const goalSnapshotPath = (paths: SessionPaths): string => NodePath.join(paths.derivedDir, "goal.json")

/** The goal tracker's scratch directory. */
export const goalScratchDir = (paths: SessionPaths): string => NodePath.join(paths.dir, GOAL_SCRATCH_DIR)

const utf8 = new TextDecoder("utf-8")

const loadDecoded = <A>(
  operation: string,
  path: string,
  decode: (text: string) => Result.Result<A, Schema.SchemaError>
): Effect.Effect<Option.Option<A>, StoreIoError | CorruptFile, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const bytes = yield* fs.readFileNoFollow(path)
    if (Option.isNone(bytes)) return Option.none()
    const decoded = decode(utf8.decode(bytes.value))
    if (Result.isFailure(decoded)) {
      return yield* new CorruptFile({ operation, path, detail: decoded.failure.message })
    }
    return Option.some(decoded.success)
  })

/** Loads the ledger: absent → none; unparseable → `CorruptFile` naming the file. */
export const loadProgress = (paths: SessionPaths) =>
  loadDecoded("loadProgress", progressPath(paths), decodeProgressText)

/** Saves the ledger atomically (0600), creating `derived/` privately if needed. */
export const saveProgress = (
  paths: SessionPaths,
  ledger: ProgressLedger
): Effect.Effect<void, StoreIoError, SessionFs> =>
  SessionFs.use((fs) => fs.writeAtomic(progressPath(paths), encodeProgress(ledger)))

/** Loads the goal snapshot: absent → none; unparseable → `CorruptFile`. */
export const loadGoalSnapshot = (
  paths: SessionPaths
): Effect.Effect<Option.Option<GoalSnapshot>, StoreIoError | CorruptFile, SessionFs> =>
  loadDecoded("loadGoalSnapshot", goalSnapshotPath(paths), decodeGoalSnapshotText)

/**
 * Saves the goal snapshot atomically, or removes it when there is no goal.
 *
 * **Gotchas**: account elapsed time before saving; the snapshot holds only accounted time.
 */
export const saveGoalSnapshot = (
  paths: SessionPaths,
  goal: Option.Option<GoalOrchestration>
): Effect.Effect<void, StoreIoError, SessionFs> =>
  SessionFs.use((fs) =>
    Option.match(goal, {
      onNone: () => Effect.asVoid(fs.removeFile(goalSnapshotPath(paths))),
      onSome: (g) => fs.writeAtomic(goalSnapshotPath(paths), encodeGoalSnapshot(g))
    })
  )

/** Runs the tracker's scratch-directory effects in order; failures are ignored as the spec says. */
export const applyGoalScratchEffects = (
  paths: SessionPaths,
  effects: ReadonlyArray<GoalScratchEffect>
): Effect.Effect<void, never, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    for (const effect of effects) {
      const run = effect === "create_scratch"
        ? fs.ensurePrivateDir(goalScratchDir(paths))
        : fs.removeTree(goalScratchDir(paths))
      yield* Effect.ignore(run)
    }
  })
