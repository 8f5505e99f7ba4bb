import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import { GoalCommand, newProgressLedger, setMilestones } from "@logbook/domain"
import { SessionFs } from "@logbook/store"
import { Effect, Exit, Layer, Sink, Stdio } from "effect"
import { Command } from "effect/cli"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { exitCodeOf } from "../../src/cli/Errors.ts"
import { goalCommand, progressCommand } from "../../src/cli/Goal.ts"
import { CLI_VERSION, rootCommand } from "../../src/cli/Root.ts"
import { SessionMemory, storeLayerNode } from "../../src/SessionMemory.ts"

const cli = rootCommand.pipe(Command.withSubcommands([goalCommand, progressCommand]))

const run = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const out: Array<string> = []
    const decoder = new TextDecoder()
    const stdio = Stdio.layerTest({
      stdout: () =>
        Sink.forEach((chunk: string | Uint8Array) =>
          Effect.sync(() => out.push(typeof chunk === "string" ? chunk : decoder.decode(chunk)))
        )
    })
    yield* Command.runWith(cli, { version: CLI_VERSION })(args).pipe(
      Effect.provide(Layer.mergeAll(SessionFs.layerNode, Layer.merge(NodeServices.layer, stdio)))
    )
    return out.join("")
  })

const tempWorkspace = () => fs.mkdtempSync(path.join(os.tmpdir(), "logbook-goal-cli-"))

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
      const workspace = tempWorkspace()
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
      const workspace = tempWorkspace()
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
      const workspace = tempWorkspace()
      yield* Effect.provide(
        SessionMemory.use((m) => m.append({ type: "turn.started" })),
        SessionMemory.layer({ workspace, sessionId: "plain", retention: false })
      ).pipe(Effect.provide(storeLayerNode))
      assert.include(yield* run(["--workspace", workspace, "goal", "show", "plain"]), "has no goal")
      assert.strictEqual((yield* run(["--workspace", workspace, "progress", "show", "plain", "--json"])).trim(), "null")
    }))

  it.effect("a corrupt goal file is an integrity problem (exit 5) naming the file", () =>
    Effect.gen(function*() {
      const workspace = tempWorkspace()
      yield* recordGoal(workspace)
      const file = path.join(workspace, ".logbook", "sessions", "goal-cli", "derived", "goal.json")
      fs.writeFileSync(file, "{broken")
      const exit = yield* Effect.exit(run(["--workspace", workspace, "goal", "show", "goal-cli"]))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = exit.cause.reasons[0]
        const failure = error !== undefined && "error" in error ? error.error : undefined
        assert.strictEqual(exitCodeOf(failure), 5)
        assert.include(String(failure instanceof Error ? failure.message : ""), "goal.json")
      }
    }))

  it.effect("an unknown session is not found (exit 3)", () =>
    Effect.gen(function*() {
      const workspace = tempWorkspace()
      const exit = yield* Effect.exit(run(["--workspace", workspace, "goal", "show", "nope"]))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = exit.cause.reasons[0]
        assert.strictEqual(exitCodeOf(error !== undefined && "error" in error ? error.error : undefined), 3)
      }
    }))
})
