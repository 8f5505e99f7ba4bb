/**
 * Migration of legacy VT Code stores: the reference fixtures import byte for byte into private
 * sessions with completed manifests; a re-run is a no-op; imported sessions survive the default
 * retention policy; `removeLegacy` removes only `history/` and `logs/`; links planted in or in
 * place of the legacy folders are never followed; a dry run writes nothing; a crash half-way
 * leaves nothing visible and the next run completes it.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempWorkspace } from "@logbook/testkit"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { FaultController, SessionFs } from "../../src/fs/SessionFs.ts"
import { migrateLegacy } from "../../src/retention/Migration.ts"
import { Retention } from "../../src/retention/Retention.ts"

const fixtures = new URL("../../../../test/fixtures/vtcode-legacy/", import.meta.url)
const memoryFixture = fs.readFileSync(new URL("vtcode-legacy-history-envelope.session-foo.memory.json", fixtures))
const trajectoryFixture = fs.readFileSync(new URL("vtcode-legacy-trajectory-20260101T000000Z.jsonl", fixtures))

const OLD = new Date("2020-05-01T12:00:00Z")

const layer = Retention.layer.pipe(Layer.provideMerge(SessionFs.layerNode))
const faultyLayer = Retention.layer.pipe(Layer.provideMerge(SessionFs.layerFaulty()))

/** A workspace with the two fixtures in `.vtcode/history` and `.vtcode/logs`, their mtime in 2020. */
const legacyWorkspace = Effect.gen(function*() {
  const ws = yield* tempWorkspace("migrate", { dirs: [".vtcode/history", ".vtcode/logs", ".vtcode/checkpoints"] })
  const vtcode = path.join(ws.root, ".vtcode")
  const history = path.join(vtcode, "history", "session-foo.memory.json")
  const logs = path.join(vtcode, "logs", "trajectory-20260101T000000Z.jsonl")
  fs.writeFileSync(history, memoryFixture)
  fs.writeFileSync(logs, trajectoryFixture)
  fs.writeFileSync(path.join(vtcode, "history", "notes.txt"), "not an envelope")
  fs.writeFileSync(path.join(vtcode, "checkpoints", "keep.bin"), "checkpoint")
  for (const file of [history, logs]) fs.utimesSync(file, OLD, OLD)
  return { ...ws, vtcode }
})

/** Every path below `dir` with its mode and bytes, to prove a run changed nothing. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  if (!fs.existsSync(dir)) return out
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    const p = path.join(dir, name)
    const st = fs.lstatSync(p)
    out[name] = st.isDirectory() ? `dir ${st.mode}` : `${st.mode} ${fs.readFileSync(p).toString("base64")}`
  }
  return out
}

const modeOf = (p: string) => fs.statSync(p).mode & 0o777

describe("migrateLegacy", () => {
  it.effect("imports the reference fixtures byte for byte into private, completed, pinned sessions", () =>
    Effect.gen(function*() {
      const ws = yield* legacyWorkspace
      const report = yield* migrateLegacy(ws.vtcode, ws.sessions)
      assert.deepStrictEqual(
        [report.sessionsCreated, report.memoryImported, report.trajectoryImported, report.bytesMigrated],
        [2, 1, 1, memoryFixture.length + trajectoryFixture.length]
      )
      assert.deepStrictEqual(report.created.map((c) => [c.source, c.sessionId, c.kind]), [
        ["history/session-foo.memory.json", "session-foo.memory", "memory"],
        ["logs/trajectory-20260101T000000Z.jsonl", "traj-20260101T000000Z", "trajectory"]
      ])
      assert.deepStrictEqual(report.skipped, [])
      const foo = path.join(ws.sessions, "session-foo.memory")
      const traj = path.join(ws.sessions, "traj-20260101T000000Z")
      assert.isTrue(fs.readFileSync(path.join(foo, "derived", "memory.json")).equals(memoryFixture))
      assert.isTrue(fs.readFileSync(path.join(traj, "derived", "trajectory.jsonl")).equals(trajectoryFixture))
      for (const dir of [foo, traj]) {
        assert.strictEqual(modeOf(dir), 0o700)
        assert.strictEqual(modeOf(path.join(dir, "derived")), 0o700)
        assert.strictEqual(modeOf(path.join(dir, "manifest.json")), 0o600)
        assert.strictEqual(modeOf(path.join(dir, "retention-pin.json")), 0o600)
      }
      const manifest = JSON.parse(fs.readFileSync(path.join(foo, "manifest.json"), "utf8"))
      assert.deepStrictEqual(manifest, {
        session_id: "session-foo.memory",
        schema_version: 1,
        created_at: "2020-05-01T12:00:00.000+00:00",
        updated_at: "2020-05-01T12:00:00.000+00:00",
        turn_count: 0,
        event_count: 0,
        status: "completed",
        in_turn: false,
        persisted_file_len: 0,
        retained_turn_base: 1
      })
      assert.include(fs.readFileSync(path.join(foo, "retention-pin.json"), "utf8"), "history/session-foo.memory.json")
      assert.deepStrictEqual(fs.readdirSync(ws.sessions).sort(), ["session-foo.memory", "traj-20260101T000000Z"])
      // The legacy files stay where they were without removeLegacy.
      assert.isTrue(fs.existsSync(path.join(ws.vtcode, "history", "session-foo.memory.json")))
    }).pipe(Effect.provide(layer)))

  it.effect("a re-run is a no-op: existing sessions are skipped and reported, never rewritten or counted", () =>
    Effect.gen(function*() {
      const ws = yield* legacyWorkspace
      yield* migrateLegacy(ws.vtcode, ws.sessions)
      fs.writeFileSync(path.join(ws.sessions, "session-foo.memory", "derived", "memory.json"), "edited since")
      const before = snapshot(ws.sessions)
      const again = yield* migrateLegacy(ws.vtcode, ws.sessions)
      assert.deepStrictEqual([again.sessionsCreated, again.bytesMigrated, again.created], [0, 0, []])
      assert.deepStrictEqual(again.skipped.map((s) => s.source), [
        "history/session-foo.memory.json",
        "logs/trajectory-20260101T000000Z.jsonl"
      ])
      assert.include(again.skipped[0]?.reason ?? "", "already exists")
      assert.deepStrictEqual(snapshot(ws.sessions), before)
    }).pipe(Effect.provide(layer)))

  it.effect("imported sessions survive the default retention policy, which removes an ordinary empty session", () =>
    Effect.gen(function*() {
      const ws = yield* legacyWorkspace
      yield* migrateLegacy(ws.vtcode, ws.sessions)
      const empty = path.join(ws.sessions, "empty")
      fs.mkdirSync(empty, { mode: 0o700 })
      fs.writeFileSync(
        path.join(empty, "manifest.json"),
        JSON.stringify({
          session_id: "empty",
          schema_version: 1,
          created_at: "2020-05-01T12:00:00+00:00",
          updated_at: "2020-05-01T12:00:00+00:00",
          turn_count: 0,
          event_count: 0,
          status: "completed"
        })
      )
      const retention = yield* Retention
      const report = yield* retention.apply(ws.sessions)
      assert.deepStrictEqual(report.removed.map((r) => r.id), ["empty"])
      assert.deepStrictEqual(fs.readdirSync(ws.sessions).filter((n) => !n.startsWith(".")).sort(), [
        "session-foo.memory",
        "traj-20260101T000000Z"
      ])
    }).pipe(Effect.provide(layer)))

  it.effect("removeLegacy removes only history/ and logs/, after importing", () =>
    Effect.gen(function*() {
      const ws = yield* legacyWorkspace
      fs.rmSync(path.join(ws.vtcode, "history", "notes.txt"))
      const report = yield* migrateLegacy(ws.vtcode, ws.sessions, { removeLegacy: true })
      assert.strictEqual(report.sessionsCreated, 2)
      assert.deepStrictEqual(report.legacyKept, [])
      assert.strictEqual(report.legacyBytesFreed, memoryFixture.length + trajectoryFixture.length)
      assert.deepStrictEqual(fs.readdirSync(ws.vtcode).sort(), ["checkpoints"])
      assert.strictEqual(fs.readFileSync(path.join(ws.vtcode, "checkpoints", "keep.bin"), "utf8"), "checkpoint")
      assert.isTrue(fs.existsSync(path.join(ws.sessions, "session-foo.memory", "derived", "memory.json")))
    }).pipe(Effect.provide(layer)))

  it.effect("removeLegacy removes nothing while a legacy entry was neither imported nor already held", () =>
    Effect.gen(function*() {
      const ws = yield* legacyWorkspace
      // A session directory of the same name with other content: the legacy file is not imported.
      const clash = path.join(ws.sessions, "session-foo.memory", "derived")
      fs.mkdirSync(clash, { recursive: true })
      fs.writeFileSync(path.join(clash, "memory.json"), "another session's view")
      const before = snapshot(ws.vtcode)
      const report = yield* migrateLegacy(ws.vtcode, ws.sessions, { removeLegacy: true })
      assert.deepStrictEqual(report.created.map((c) => c.sessionId), ["traj-20260101T000000Z"])
      assert.isUndefined(report.legacyBytesFreed)
      assert.deepStrictEqual(report.legacyKept.map((k) => k.source), [
        "history/notes.txt",
        "history/session-foo.memory.json"
      ])
      assert.include(
        report.legacyKept[1]?.reason ?? "",
        "not imported: session directory session-foo.memory already exists"
      )
      assert.deepStrictEqual(snapshot(ws.vtcode), before)
      // Once the clash holds the legacy bytes and the stray file is gone, every entry is accounted for.
      fs.writeFileSync(path.join(clash, "memory.json"), memoryFixture)
      fs.rmSync(path.join(ws.vtcode, "history", "notes.txt"))
      const again = yield* migrateLegacy(ws.vtcode, ws.sessions, { removeLegacy: true })
      assert.deepStrictEqual(again.legacyKept, [])
      assert.include(again.skipped[0]?.reason ?? "", "holds the same bytes (imported before)")
      assert.strictEqual(again.legacyBytesFreed, memoryFixture.length + trajectoryFixture.length)
      assert.deepStrictEqual(fs.readdirSync(ws.vtcode).sort(), ["checkpoints"])
    }).pipe(Effect.provide(layer)))

  it.effect("never follows links planted in history/ or logs/, or in place of a legacy folder", () =>
    Effect.gen(function*() {
      const ws = yield* legacyWorkspace
      const outside = path.join(ws.root, "outside")
      fs.mkdirSync(path.join(outside, "logs"), { recursive: true })
      fs.writeFileSync(path.join(outside, "secret.json"), "{\"secret\":true}")
      fs.writeFileSync(path.join(outside, "logs", "trajectory-x.jsonl"), "{\"secret\":true}\n")
      fs.symlinkSync(path.join(outside, "secret.json"), path.join(ws.vtcode, "history", "evil.json"))
      fs.mkdirSync(path.join(ws.vtcode, "history", "dir.json"))
      fs.symlinkSync(path.join(outside, "secret.json"), path.join(ws.vtcode, "logs", "evil.jsonl"))
      const outsideBefore = snapshot(outside)
      const first = yield* migrateLegacy(ws.vtcode, ws.sessions)
      assert.deepStrictEqual(first.created.map((c) => c.sessionId), ["session-foo.memory", "traj-20260101T000000Z"])
      assert.deepStrictEqual(first.skipped, [
        { source: "history/dir.json", reason: "not a regular file" },
        { source: "history/evil.json", reason: "a symbolic link (never followed)" },
        { source: "logs/evil.jsonl", reason: "a symbolic link (never followed)" }
      ])
      // The whole logs folder replaced by a link to a directory outside.
      fs.rmSync(path.join(ws.vtcode, "logs"), { recursive: true })
      fs.symlinkSync(path.join(outside, "logs"), path.join(ws.vtcode, "logs"))
      const second = yield* migrateLegacy(ws.vtcode, ws.sessions, { removeLegacy: true })
      assert.deepStrictEqual(second.created, [])
      assert.deepStrictEqual(second.skipped.find((s) => s.source === "logs"), {
        source: "logs",
        reason: "the legacy folder is a symbolic link (never followed)"
      })
      assert.isFalse(fs.existsSync(path.join(ws.sessions, "traj-x")))
      assert.isFalse(fs.existsSync(path.join(ws.sessions, "evil")))
      assert.deepStrictEqual(snapshot(outside), outsideBefore)
      // Entries that were not imported (the links, the directory, the linked folder) keep the folders.
      assert.isUndefined(second.legacyBytesFreed)
      assert.includeMembers(second.legacyKept.map((k) => k.source), ["logs", "history/evil.json", "history/dir.json"])
      assert.isTrue(fs.lstatSync(path.join(ws.vtcode, "logs")).isSymbolicLink())
    }).pipe(Effect.provide(layer)))

  it.effect("a dry run reports what it would create and writes nothing", () =>
    Effect.gen(function*() {
      const ws = yield* legacyWorkspace
      const before = snapshot(ws.root)
      const report = yield* migrateLegacy(ws.vtcode, ws.sessions, { dryRun: true, removeLegacy: true })
      assert.isTrue(report.dryRun)
      assert.strictEqual(report.sessionsCreated, 2)
      assert.isUndefined(report.legacyBytesFreed)
      assert.deepStrictEqual(snapshot(ws.root), before)
    }).pipe(Effect.provide(layer)))

  it.effect("a failure half-way leaves no partial session, and the next run completes the import", () =>
    Effect.gen(function*() {
      const ws = yield* legacyWorkspace
      const controller = yield* FaultController
      yield* controller.arm({ _tag: "Fail", call: 0, code: "EIO", op: "rename", persistent: true })
      // The first atomic write's own rename fails: nothing reaches the sessions root.
      const failed = yield* Effect.exit(migrateLegacy(ws.vtcode, ws.sessions))
      assert.isTrue(Exit.isFailure(failed))
      assert.deepStrictEqual(fs.readdirSync(ws.sessions).filter((n) => !n.startsWith(".")), [])
      yield* controller.reset
      const report = yield* migrateLegacy(ws.vtcode, ws.sessions)
      assert.strictEqual(report.sessionsCreated, 2)
      assert.deepStrictEqual(fs.readdirSync(ws.sessions).sort(), ["session-foo.memory", "traj-20260101T000000Z"])
      assert.isTrue(
        fs.readFileSync(path.join(ws.sessions, "session-foo.memory", "derived", "memory.json")).equals(memoryFixture)
      )
    }).pipe(Effect.provide(faultyLayer)))
})
