/**
 * `logbook goal show` and `progress show` in-process: the stored goal and ledger as text and
 * JSON, a session without a goal, a corrupt goal file (exit 5) and an unknown session (exit 3).
 */
import { assert, describe, it } from "@effect/vitest"
import { GoalCommand, newProgressLedger, setMilestones } from "@logbook/domain"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionMemory, storeLayerNode } from "../../../src/SessionMemory.ts"
import { logbook } from "../inProcess.ts"

/** Runs `logbook <args>` in-process and returns its stdout, failing the test on a non-zero exit. */
const run = (args: ReadonlyArray<string>) =>
  Effect.map(logbook(args), (r) => {
    assert.strictEqual(r.exitCode, 0, r.stderr)
    return r.stdout
  })

const tempWorkspace = () => tempDir("goal-cli")

/** A session with a goal paused once and a ledger with two milestones. */
const recordGoal = (workspace: string) =>
  Effect.gen(function*() {
    const memory = yield* SessionMemory
    yield* memory.append({ type: "turn.started" })
    yield* memory.goals.createGoal({ goalId: "g-1", objective: "Make the cache test pass", tokenBudget: 50_000 })
    yield* memory.goals.run(GoalCommand.Pause({ reason: "user", message: "lunch" }))
    yield* memory.goals.updateProgress((_, now) =>
      setMilestones(newProgressLedger("goal-cli", "Make the cache test pass", now), [
        { id: "m1", description: "reproduce", status: "done" },
        { id: "m2", description: "fix", status: "in_progress" }
      ], now)
    )
  }).pipe(
    Effect.provide(SessionMemory.layer({ workspace, sessionId: "goal-cli", retention: false })),
    Effect.provide(storeLayerNode)
  )

describe("logbook goal and progress", () => {
  it.effect("goal show prints the stored goal with its status, budget and history", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      yield* recordGoal(workspace)
      const text = yield* run(["--workspace", workspace, "goal", "show", "goal-cli"])
      assert.include(text, "Goal g-1 of session goal-cli")
      assert.include(text, "user_paused — lunch")
      assert.include(text, "50000 tokens")
      assert.include(text, "goal_paused (user)")
      const json = JSON.parse(yield* run(["--workspace", workspace, "goal", "show", "goal-cli", "--json"]))
      assert.strictEqual(json.goal_id, "g-1")
      assert.strictEqual(json.status, "user_paused")
    }))

  it.effect("progress show prints the ledger as Markdown and --json as stored", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      yield* recordGoal(workspace)
      const text = yield* run(["--workspace", workspace, "progress", "show", "goal-cli"])
      assert.include(text, "# Session Progress")
      assert.include(text, "**Completion:** 50%")
      assert.include(text, "[~] m2 — fix")
      const json = JSON.parse(yield* run(["--workspace", workspace, "progress", "show", "goal-cli", "--json"]))
      assert.strictEqual(json.milestones.length, 2)
    }))

  it.effect("a session without a goal says so, and --json prints null", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      yield* Effect.provide(
        SessionMemory.use((m) => m.append({ type: "turn.started" })),
        SessionMemory.layer({ workspace, sessionId: "plain", retention: false })
      ).pipe(Effect.provide(storeLayerNode))
      assert.include(yield* run(["--workspace", workspace, "goal", "show", "plain"]), "has no goal")
      assert.strictEqual((yield* run(["--workspace", workspace, "progress", "show", "plain", "--json"])).trim(), "null")
    }))

  it.effect("a corrupt goal file is an integrity problem (exit 5) naming the file", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      yield* recordGoal(workspace)
      const file = path.join(workspace, ".logbook", "sessions", "goal-cli", "derived", "goal.json")
      fs.writeFileSync(file, "{broken")
      const corrupt = yield* logbook(["--workspace", workspace, "goal", "show", "goal-cli"])
      assert.strictEqual(corrupt.exitCode, 5)
      assert.include(corrupt.stderr, "goal.json is corrupt")
      assert.include(corrupt.stderr, "move it aside")
    }))

  it.effect("an unknown session is not found (exit 3)", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      const missing = yield* logbook(["--workspace", workspace, "goal", "show", "nope"])
      assert.strictEqual(missing.exitCode, 3)
      assert.include(missing.stderr, "session nope not found")
    }))
})
