/**
 * `logbook matrix show` in-process: the replayed matrices as text and JSON, a failed replay as
 * exit 5 with its reason, an unknown session as exit 3.
 */
import { assert, describe, it } from "@effect/vitest"
import type { MatrixSpec } from "@logbook/domain"
import { encodeLine, encodeMatrixSnapshotJson } from "@logbook/domain"
import { EventLog, SessionFs, SessionRegistry } from "@logbook/store"
import { buildTestSpec, tempWorkspace } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { makeMatrixCoordinator } from "../../../src/MatrixCoordinator.ts"
import { logbook } from "../inProcess.ts"

const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

/** Runs `logbook <args>` in-process and returns its stdout, failing the test on a non-zero exit. */
const run = (args: ReadonlyArray<string>) =>
  Effect.map(logbook(args), (r) => {
    assert.strictEqual(r.exitCode, 0, r.stderr)
    return r.stdout
  })

const workspace = () => tempWorkspace("matrix-cli", { dirs: ["src"] })

const spec: MatrixSpec = buildTestSpec("build-matrix", "src")

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
      const { root, sessions } = yield* workspace()
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
      const { root, sessions } = yield* workspace()
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

  it.effect("exits 5 with the reason when the checkpoint history does not replay", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* workspace()
      const latest = yield* recordSession(root, sessions)
      const events = path.join(sessions, "s", "events.jsonl")
      const offset = fs.statSync(events).size
      fs.appendFileSync(events, encodeLine({ type: "matrix.updated", ...latest }) + "\n")
      const sizeBefore = fs.statSync(events).size
      const failed = yield* logbook(["--sessions-dir", sessions, "matrix", "show", "s"])
      assert.strictEqual(failed.exitCode, 5)
      assert.strictEqual(failed.stdout, "")
      assert.include(
        failed.stderr,
        `logbook: session s: matrix replay failed, so every matrix stays closed: ` +
          `matrix checkpoint at byte ${offset}: matrix revision did not advance; `
      )
      assert.strictEqual(fs.statSync(events).size, sizeBefore, "the command never writes")
    }))

  it.effect("names the byte offset of a decodable but invalid checkpoint, which `events --offsets` locates", () =>
    Effect.gen(function*() {
      const { root, sessions } = yield* workspace()
      const latest = yield* recordSession(root, sessions)
      const events = path.join(sessions, "s", "events.jsonl")
      const offset = fs.statSync(events).size
      // Decodes as a ThreadEvent (so `events` alone prints it with no offset), but its revision is stale.
      fs.appendFileSync(events, encodeLine({ type: "matrix.updated", ...latest }) + "\n")
      const failed = yield* logbook(["--sessions-dir", sessions, "matrix", "show", "s"])
      assert.strictEqual(failed.exitCode, 5)
      const named = /matrix checkpoint at byte (\d+)/u.exec(failed.stderr)?.[1]
      assert.strictEqual(Number(named), offset, failed.stderr)
      assert.include(failed.stderr, "`logbook events s --offsets` prints every event with the byte offset")

      const located = yield* run(["--sessions-dir", sessions, "events", "s", "--offsets"])
      const records = located.trimEnd().split("\n").map((l) => JSON.parse(l) as { offset: number; event: unknown })
      const bytes = fs.readFileSync(events)
      for (const record of records) {
        const end = bytes.indexOf(10, record.offset)
        const envelope = JSON.parse(bytes.subarray(record.offset, end).toString("utf8")) as { event: unknown }
        assert.deepStrictEqual(record.event, envelope.event, `the line at byte ${record.offset}`)
      }
      const bad = records.find((r) => r.offset === offset)
      assert.deepStrictEqual(bad?.event, JSON.parse(encodeLine({ type: "matrix.updated", ...latest })).event)
      const bare = yield* run(["--sessions-dir", sessions, "events", "s"])
      assert.deepStrictEqual(
        bare.trimEnd().split("\n").map((l) => JSON.parse(l) as unknown),
        records.map((r) => r.event),
        "without --offsets the same events print bare"
      )
    }))

  it.effect("reports an unknown session as not found (exit 3) with what to do", () =>
    Effect.gen(function*() {
      const { sessions } = yield* workspace()
      fs.mkdirSync(sessions, { recursive: true })
      const missing = yield* logbook(["--sessions-dir", sessions, "matrix", "show", "nope"])
      assert.strictEqual(missing.exitCode, 3)
      assert.include(missing.stderr, "session nope not found")
      assert.include(missing.stderr, "logbook sessions")
    }))
})
