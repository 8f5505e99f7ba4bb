import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it } from "@effect/vitest"
import type { MatrixSpec, MatrixTaskSpec } from "@logbook/domain"
import { encodeLine, encodeMatrixSnapshotJson } from "@logbook/domain"
import { EventLog, SessionFs, SessionRegistry } from "@logbook/store"
import { Effect, Layer, Sink, Stdio } from "effect"
import { Command } from "effect/cli"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { matrixCommand } from "../../src/cli/Matrix.ts"
import { CLI_VERSION, rootCommand } from "../../src/cli/Root.ts"
import { makeMatrixCoordinator } from "../../src/MatrixCoordinator.ts"

const cli = rootCommand.pipe(Command.withSubcommands([matrixCommand]))

const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

/** Runs `logbook <args>` and returns what it wrote to stdout (the failure, if any, is the Effect's). */
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

const tempWorkspace = () =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "logbook-matrix-cli-"))
      fs.mkdirSync(path.join(root, "src"))
      return { root, sessions: path.join(root, ".logbook", "sessions") }
    }),
    ({ root }) => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true }))
  )

const task = (id: string, overrides: Partial<MatrixTaskSpec> = {}): MatrixTaskSpec => ({
  id,
  instructions: `do ${id}`,
  dependencies: [],
  workspace: "src",
  access: "read",
  checks: [`check ${id}`],
  resources: {},
  timeout_secs: 60,
  replay_safe: false,
  inputs: [],
  ...overrides
})

const spec: MatrixSpec = {
  id: "build-matrix",
  tasks: [task("build"), task("test", { dependencies: ["build"] })],
  resources: {}
}

/** A session `s` whose matrix ran `build` to success and has `test` launched. */
const recordSession = (root: string, sessions: string) =>
  Effect.scoped(Effect.gen(function*() {
    const log = yield* EventLog.open({ sessionsDir: sessions, sessionId: "s" })
    const matrix = yield* makeMatrixCoordinator(log)
    yield* Effect.andThen(matrix.create(spec, root), matrix.start(spec.id))
    const build = (yield* matrix.reserveReady(spec.id)).assignments[0]
    if (build === undefined) return assert.fail("build not admitted")
    yield* matrix.markLaunchRequested(spec.id, build.attempt_id)
    yield* matrix.report(spec.id, {
      attemptId: build.attempt_id,
      workerId: build.worker_id,
      outcome: "success",
      evidence: [],
      cleanupConfirmed: true
    })
    const test = (yield* matrix.reserveReady(spec.id)).assignments[0]
    if (test === undefined) return assert.fail("test not admitted")
    return yield* matrix.markLaunchRequested(spec.id, test.attempt_id)
  })).pipe(Effect.provide(storeLayer))

describe("logbook matrix show", () => {
  it.effect("prints each matrix's lifecycle, revision, generation and tasks with status and attempts", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* tempWorkspace()
      const latest = yield* recordSession(root, sessions)
      const text = yield* run(["--sessions-dir", sessions, "matrix", "show", "s"])
      const lines = text.split("\n")
      assert.include(lines, "Matrix build-matrix")
      assert.include(lines, "  Lifecycle   running")
      assert.include(lines, `  Revision    ${latest.revision}`)
      assert.include(lines, "  Generation  none (not verifying)")
      assert.include(lines, "  Tasks       2 (1 executed, 1 assigned)")
      const build = lines.find((l) => l.trimStart().startsWith("build "))
      const test = lines.find((l) => l.trimStart().startsWith("test "))
      assert.match(build ?? "", /^\s+build\s+executed\s+1\s+0\s+execute: success, cleaned up$/)
      assert.match(test ?? "", /^\s+test\s+assigned\s+1\s+0\s+execute: launched, no report yet$/)
    }))

  it.effect("prints the replayed snapshots with --json, and an empty array without matrices", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* tempWorkspace()
      const latest = yield* recordSession(root, sessions)
      const json = yield* run(["--sessions-dir", sessions, "matrix", "show", "s", "--json"])
      assert.deepStrictEqual(JSON.parse(json), [JSON.parse(encodeMatrixSnapshotJson(latest))])
      yield* Effect.scoped(EventLog.open({ sessionsDir: sessions, sessionId: "empty" })).pipe(
        Effect.provide(storeLayer)
      )
      assert.deepStrictEqual(
        JSON.parse(yield* run(["--sessions-dir", sessions, "matrix", "show", "empty", "--json"])),
        []
      )
      const text = yield* run(["--sessions-dir", sessions, "matrix", "show", "empty"])
      assert.strictEqual(text, "No matrices in session empty (no matrix.updated checkpoint in its log).\n")
    }))

  it.effect("fails with MatrixReplayFailed and the reason when the checkpoint history is invalid", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* tempWorkspace()
      const latest = yield* recordSession(root, sessions)
      const events = path.join(sessions, "s", "events.jsonl")
      const offset = fs.statSync(events).size
      fs.appendFileSync(events, encodeLine({ type: "matrix.updated", ...latest }) + "\n")
      const sizeBefore = fs.statSync(events).size
      const error = yield* Effect.flip(run(["--sessions-dir", sessions, "matrix", "show", "s"]))
      assert.strictEqual(error._tag, "MatrixReplayFailed")
      assert.strictEqual(
        error.message,
        `session s: matrix replay failed, so every matrix stays closed: ` +
          `matrix checkpoint at byte ${offset}: matrix revision did not advance`
      )
      assert.strictEqual(fs.statSync(events).size, sizeBefore, "the command never writes")
    }))

  it.effect("reports an unknown session as SessionNotFound", () =>
    Effect.gen(function*() {
      const { sessions } = yield* tempWorkspace()
      fs.mkdirSync(sessions, { recursive: true })
      const error = yield* Effect.flip(run(["--sessions-dir", sessions, "matrix", "show", "nope"]))
      assert.strictEqual(error._tag, "SessionNotFound")
    }))
})
