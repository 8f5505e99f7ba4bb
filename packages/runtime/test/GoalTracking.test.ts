import { assert, describe, it } from "@effect/vitest"
import { GoalCommand, newProgressLedger, noteStall, progressToMarkdown } from "@logbook/domain"
import type { CorruptFile, StoreIoError } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Exit, Option } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeGoalTracking } from "../src/GoalTracking.ts"
import { SessionMemory } from "../src/SessionMemory.ts"
import { IdGenerator, sequentialIds, sessionPaths, storeLayerNodeForTests } from "./support.ts"

/** A temporary workspace, removed when the test's scope closes. */
const tempWorkspace = () => tempDir("goals")
const sessionsDir = (workspace: string) => path.join(workspace, ".logbook", "sessions")

const withSession = <A, E>(workspace: string, body: Effect.Effect<A, E, SessionMemory>) =>
  body.pipe(Effect.provide(SessionMemory.layer({ workspace, sessionId: "goal-session", retention: false })))

describe("GoalTracking", () => {
  it.effect("a created goal is durable when createGoal returns and restores paused and idle", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      const step = yield* withSession(
        workspace,
        SessionMemory.use((m) => m.goals.createGoal({ goalId: "g1", objective: "ship it" }))
      )
      assert.isTrue(step.applied)
      const file = path.join(sessionsDir(workspace), "goal-session", "derived", "goal.json")
      const saved = JSON.parse(fs.readFileSync(file, "utf8"))
      assert.strictEqual(saved.status, "active")
      assert.strictEqual(saved.phase, "executing")
      assert.match(saved.verifier_id, /^[0-9a-f]{12}$/)
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
      const restored = yield* withSession(workspace, SessionMemory.use((m) => m.goals.state))
      const goal = Option.getOrThrow(restored.goal)
      assert.strictEqual(goal.status, "user_paused")
      assert.strictEqual(goal.phase, "idle")
      assert.strictEqual(goal.verifier_id, saved.verifier_id)
    }).pipe(Effect.provide(storeLayerNodeForTests), Effect.provideService(IdGenerator, sequentialIds(7))))

  it.effect("replacing a goal recreates its private scratch directory and clearing removes the snapshot", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      const scratch = path.join(sessionsDir(workspace), "goal-session", "goal")
      yield* withSession(
        workspace,
        Effect.gen(function*() {
          const m = yield* SessionMemory
          yield* m.goals.createGoal({ goalId: "g1", objective: "first" })
          fs.writeFileSync(path.join(scratch, "verdict.txt"), "old")
          yield* m.goals.createGoal({ goalId: "g2", objective: "second" })
          assert.isTrue(fs.statSync(scratch).isDirectory())
          assert.strictEqual(fs.statSync(scratch).mode & 0o777, 0o700)
          assert.isFalse(fs.existsSync(path.join(scratch, "verdict.txt")))
          const cleared = yield* m.goals.run(GoalCommand.Clear())
          assert.isTrue(cleared.applied)
        })
      )
      assert.isFalse(fs.existsSync(path.join(sessionsDir(workspace), "goal-session", "derived", "goal.json")))
    }).pipe(Effect.provide(storeLayerNodeForTests)))

  it.effect("elapsed time follows the test clock and accounting twice never double-counts", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      yield* withSession(
        workspace,
        Effect.gen(function*() {
          const m = yield* SessionMemory
          yield* m.goals.createGoal({ goalId: "g1", objective: "timed" })
          yield* TestClock.adjust("90 seconds")
          yield* m.goals.run(GoalCommand.AccountElapsed())
          yield* m.goals.run(GoalCommand.AccountElapsed())
          const state = yield* m.goals.state
          assert.strictEqual(Option.getOrThrow(state.goal).elapsed_ms, 90_000)
          yield* TestClock.adjust("10 seconds")
          assert.strictEqual(yield* m.goals.elapsedMs, 100_000)
        })
      )
    }).pipe(Effect.provide(storeLayerNodeForTests)))

  it.effect("the progress ledger round-trips through derived/progress.json", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      const saved = yield* withSession(
        workspace,
        Effect.gen(function*() {
          const m = yield* SessionMemory
          yield* m.goals.updateProgress((_, now) => newProgressLedger("goal-session", "ship it", now))
          return yield* m.goals.updateProgress((l, now) => noteStall(Option.getOrThrow(l), now))
        })
      )
      const loaded = yield* withSession(workspace, SessionMemory.use((m) => m.goals.progress))
      assert.deepStrictEqual(Option.getOrThrow(loaded), saved)
      assert.include(progressToMarkdown(saved), "**Confidence:** 0.90")
    }).pipe(Effect.provide(storeLayerNodeForTests)))

  it.effect("a corrupt goal snapshot does not fail loading; every use of the tracker fails naming the file", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      const paths = sessionPaths(sessionsDir(workspace), "broken")
      fs.mkdirSync(paths.derivedDir, { recursive: true })
      const goalFile = path.join(paths.derivedDir, "goal.json")
      fs.writeFileSync(goalFile, "{not json")
      const goals = yield* makeGoalTracking(paths)
      const uses: ReadonlyArray<Effect.Effect<unknown, StoreIoError | CorruptFile>> = [
        goals.state,
        goals.elapsedMs,
        goals.createGoal({ goalId: "g", objective: "ship it" })
      ]
      for (const use of uses) {
        const exit = yield* Effect.exit(use)
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = exit.cause.reasons[0]
          const failure = error !== undefined && "error" in error ? error.error : undefined
          assert.strictEqual(failure?._tag, "CorruptFile")
          assert.include(String(failure), "goal.json")
        }
      }
      assert.strictEqual(fs.readFileSync(goalFile, "utf8"), "{not json", "the corrupt file is never overwritten")
    }).pipe(Effect.provide(storeLayerNodeForTests)))

  it.effect("a corrupt derived/goal.json neither blocks the session nor recording into its log", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      const paths = sessionPaths(sessionsDir(workspace), "goal-session")
      fs.mkdirSync(paths.derivedDir, { recursive: true })
      fs.writeFileSync(path.join(paths.derivedDir, "goal.json"), "{not json")
      const manifest = yield* withSession(
        workspace,
        Effect.gen(function*() {
          const m = yield* SessionMemory
          yield* m.append({ type: "turn.started" })
          yield* m.append({
            type: "turn.completed",
            usage: { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }
          })
          const goal = yield* Effect.exit(m.goals.state)
          assert.isTrue(Exit.isFailure(goal), "the goal tracker reports the corrupt file")
          return yield* m.manifest
        })
      )
      assert.strictEqual(manifest.turn_count, 1)
      assert.strictEqual(manifest.event_count, 2)
    }).pipe(Effect.provide(storeLayerNodeForTests)))
})
