/**
 * Retention on a real temporary store: the phases and their order under a frozen clock, the
 * preserved session, pins, the abandoned sweep, `maxAgeDays: 0`, invalid manifests, leftover
 * trash, close-path eviction and legacy garbage collection.
 */
import { assert, describe, layer } from "@effect/vitest"
import { sessionDirName } from "@logbook/domain"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import { TRASH_DIR } from "../../src/retention/internal/retentionRemove.ts"
import {
  isoDaysAgo,
  listed,
  manifestText,
  retentionLayer,
  retentionSetup,
  snapshot,
  writeSession
} from "../fixtures/retention-helpers.ts"

const removedIds = (report: { readonly removed: ReadonlyArray<{ readonly id: string; readonly phase: string }> }) =>
  report.removed.map((r) => `${r.phase}:${r.id}`)

const readJson = (file: string): unknown => JSON.parse(fs.readFileSync(file, "utf8"))

layer(retentionLayer)("Retention", (it) => {
  describe("apply", () => {
    it.effect("removes zero-turn sessions, then the oldest surplus, then the expired, and reports each phase", () =>
      Effect.gen(function*() {
        const { retention, root } = yield* retentionSetup
        writeSession(root, "empty", { turnCount: 0, updatedAt: isoDaysAgo(0) })
        writeSession(root, "s1", { updatedAt: "2026-09-30T10:00:00+02:00" }) // 08:00Z: older than s2
        writeSession(root, "s2", { updatedAt: "2026-09-30T09:00:00Z" })
        writeSession(root, "s3", { updatedAt: isoDaysAgo(1) })
        writeSession(root, "s4", { updatedAt: isoDaysAgo(0.5) })
        const report = yield* retention.apply(root, { maxSessions: 2, maxAgeDays: 30 })
        assert.deepStrictEqual(removedIds(report), ["zero-turn:empty", "over-limit:s1", "over-limit:s2"])
        assert.deepStrictEqual(listed(root), ["s3", "s4"])
        const aged = yield* retention.apply(root, { maxSessions: 50, maxAgeDays: 30 })
        assert.deepStrictEqual(aged.removed, [])
        yield* TestClock.adjust("702 hours") // s3 (1 day old) passes the cutoff, s4 (half a day) not yet
        const later = yield* retention.apply(root, { maxSessions: 50, maxAgeDays: 30 })
        assert.deepStrictEqual(removedIds(later), ["expired:s3"])
        assert.deepStrictEqual(listed(root), ["s4"])
        assert.deepStrictEqual(fs.readdirSync(path.join(root, TRASH_DIR)), [])
      }))

    it.effect("uses the default policy: 50 sessions, 30 days", () =>
      Effect.gen(function*() {
        const { retention, root } = yield* retentionSetup
        for (let i = 0; i < 52; i++) {
          writeSession(root, `s${String(i).padStart(2, "0")}`, { updatedAt: isoDaysAgo(1 + i / 100) })
        }
        writeSession(root, "old", { updatedAt: isoDaysAgo(31) })
        const report = yield* retention.apply(root)
        // 53 candidates: the 3 oldest go by count (old, s51, s50), nothing is left to expire.
        assert.deepStrictEqual(removedIds(report), ["over-limit:old", "over-limit:s51", "over-limit:s50"])
        assert.strictEqual(listed(root).length, 50)
      }))

    it.effect("never touches the preserved session, given by raw id or by directory name", () =>
      Effect.gen(function*() {
        const { retention, root } = yield* retentionSetup
        const raw = "team/a b"
        writeSession(root, sessionDirName(raw), { turnCount: 0, updatedAt: isoDaysAgo(90) })
        writeSession(root, "plain", { turnCount: 0 })
        // The manifest of another session claims the preserved id: identity never comes from it.
        writeSession(root, "impostor", { turnCount: 0, extra: { session_id: raw } })
        const report = yield* retention.apply(root, { maxSessions: 0, maxAgeDays: 1 }, { preserve: raw })
        assert.deepStrictEqual(removedIds(report), ["zero-turn:impostor", "zero-turn:plain"])
        assert.deepStrictEqual(listed(root), [sessionDirName(raw)])
        const again = yield* retention.apply(root, { maxSessions: 0, maxAgeDays: 1 }, { preserve: sessionDirName(raw) })
        assert.deepStrictEqual(again.removed, [])
      }))

    it.effect("never removes an active session, and flips only abandoned ones (older than the cutoff)", () =>
      Effect.gen(function*() {
        const { retention, root } = yield* retentionSetup
        writeSession(root, "busy", { status: "active", turnCount: 0, updatedAt: isoDaysAgo(2) })
        const abandoned = writeSession(root, "crashed", {
          status: "active",
          updatedAt: isoDaysAgo(45),
          extra: { host_note: { keep: [1, "two"] } }
        })
        const report = yield* retention.apply(root, { maxSessions: 0, maxAgeDays: 30 })
        assert.deepStrictEqual(report.marked, ["crashed"])
        assert.deepStrictEqual(removedIds(report), ["over-limit:crashed"])
        assert.deepStrictEqual(listed(root), ["busy"])
        assert.isFalse(fs.existsSync(abandoned))
        assert.strictEqual((readJson(path.join(root, "busy", "manifest.json")) as { status: string }).status, "active")
      }))

    it.effect("the sweep keeps unknown keys and the old updated_at, pretty-prints, and writes 0600", () =>
      Effect.gen(function*() {
        const { retention, root } = yield* retentionSetup
        const dir = writeSession(root, "crashed", {
          status: "active",
          updatedAt: isoDaysAgo(45),
          extra: { z_future: [1, 2] }
        })
        writeSession(root, "recent", { status: "active", updatedAt: isoDaysAgo(29) })
        const recentBefore = fs.readFileSync(path.join(root, "recent", "manifest.json"), "utf8")
        const marked = yield* retention.markAbandoned(root, 30)
        assert.deepStrictEqual(marked, ["crashed"])
        const text = fs.readFileSync(path.join(dir, "manifest.json"), "utf8")
        const expected = {
          ...(JSON.parse(
            manifestText("crashed", { status: "active", updatedAt: isoDaysAgo(45), extra: { z_future: [1, 2] } })
          ) as object),
          status: "completed"
        }
        assert.strictEqual(text, JSON.stringify(expected, null, 2))
        assert.strictEqual(fs.statSync(path.join(dir, "manifest.json")).mode & 0o777, 0o600)
        assert.strictEqual(fs.readFileSync(path.join(root, "recent", "manifest.json"), "utf8"), recentBefore)
        assert.deepStrictEqual(yield* retention.markAbandoned(root, 30, { preserve: "crashed" }), [])
      }))

    it.effect("maxAgeDays 0 disables both the sweep and age removal", () =>
      Effect.gen(function*() {
        const { retention, root } = yield* retentionSetup
        writeSession(root, "ancient", { updatedAt: "2001-01-01T00:00:00Z" })
        writeSession(root, "ancient-active", { status: "active", updatedAt: "2001-01-01T00:00:00Z" })
        const before = snapshot(root)
        const report = yield* retention.apply(root, { maxSessions: 10, maxAgeDays: 0 })
        assert.deepStrictEqual(report, { marked: [], removed: [] })
        assert.deepStrictEqual(yield* retention.markAbandoned(root, 0), [])
        assert.deepStrictEqual(snapshot(root), before)
      }))

    it.effect("skips invalid or unreadable manifests and odd entries instead of deleting them", () =>
      Effect.gen(function*() {
        const { outside, retention, root } = yield* retentionSetup
        writeSession(root, "garbage", { manifest: "{not json" })
        writeSession(root, "missing-field", {
          manifest: JSON.stringify({
            session_id: "x",
            schema_version: 1,
            created_at: "x",
            updated_at: isoDaysAgo(99),
            status: "completed"
          })
        })
        writeSession(root, "bad-status", { manifest: manifestText("bad-status", { extra: { status: "archived" } }) })
        const noManifest = writeSession(root, "no-manifest")
        fs.rmSync(path.join(noManifest, "manifest.json"))
        const dirManifest = writeSession(root, "dir-manifest")
        fs.rmSync(path.join(dirManifest, "manifest.json"))
        fs.mkdirSync(path.join(dirManifest, "manifest.json"))
        fs.writeFileSync(path.join(root, "stray-file"), manifestText("stray-file", { turnCount: 0 }))
        writeSession(root, ".hidden", { turnCount: 0 })
        writeSession(outside, "unrelated", { turnCount: 0 })
        const before = snapshot(root)
        const report = yield* retention.apply(root, { maxSessions: 0, maxAgeDays: 1 })
        assert.deepStrictEqual(report, { marked: [], removed: [] })
        assert.deepStrictEqual(snapshot(root), before)
      }))

    it.effect("does nothing when the root is missing or is not a directory", () =>
      Effect.gen(function*() {
        const { base, retention } = yield* retentionSetup
        assert.deepStrictEqual(yield* retention.apply(path.join(base, "nope")), { marked: [], removed: [] })
        const file = path.join(base, "file-root")
        fs.writeFileSync(file, "x")
        assert.deepStrictEqual(yield* retention.apply(file, { maxSessions: 0, maxAgeDays: 1 }), {
          marked: [],
          removed: []
        })
        assert.isFalse(fs.existsSync(path.join(base, "nope")))
      }))

    it.effect("empties trash left by an interrupted removal on the next run", () =>
      Effect.gen(function*() {
        const { retention, root } = yield* retentionSetup
        const trash = path.join(root, TRASH_DIR)
        fs.mkdirSync(trash, { mode: 0o700 })
        writeSession(trash, "half-deleted.1234.0")
        writeSession(root, "keep")
        const report = yield* retention.apply(root)
        assert.deepStrictEqual(report.removed, [])
        assert.deepStrictEqual(fs.readdirSync(trash), [])
        assert.deepStrictEqual(listed(root), ["keep"])
      }))
  })

  describe("pins", () => {
    it.effect("pin writes a private atomic sidecar, protects the session, and unpin releases it", () =>
      Effect.gen(function*() {
        const { retention, root } = yield* retentionSetup
        writeSession(root, "b", { turnCount: 0 })
        writeSession(root, "a", { turnCount: 0 })
        writeSession(root, "c", { turnCount: 0 })
        yield* retention.pin(root, "b", "unresolved-blocker")
        yield* retention.pin(root, "a", "audit")
        const pinFile = path.join(root, "b", "retention-pin.json")
        assert.deepStrictEqual(readJson(pinFile), {
          reason: "unresolved-blocker",
          pinned_at: "2026-10-03T00:00:00.000+00:00"
        })
        assert.strictEqual(fs.statSync(pinFile).mode & 0o777, 0o600)
        assert.isTrue(yield* retention.isPinned(root, "b"))
        assert.isFalse(yield* retention.isPinned(root, "c"))
        assert.deepStrictEqual(yield* retention.pinnedSessions(root), ["a", "b"])
        const report = yield* retention.apply(root, { maxSessions: 0, maxAgeDays: 1 })
        assert.deepStrictEqual(removedIds(report), ["zero-turn:c"])
        assert.isTrue(yield* retention.unpin(root, "b"))
        assert.isFalse(yield* retention.unpin(root, "b"))
        assert.deepStrictEqual(yield* retention.pinnedSessions(root), ["a"])
        assert.deepStrictEqual(removedIds(yield* retention.apply(root, { maxSessions: 0, maxAgeDays: 1 })), [
          "zero-turn:b"
        ])
      }))

    it.effect("pins by raw session id land in the collision-safe directory; a missing session is an error", () =>
      Effect.gen(function*() {
        const { retention, root } = yield* retentionSetup
        writeSession(root, sessionDirName("a/b"))
        yield* retention.pin(root, "a/b", "keep")
        assert.deepStrictEqual(yield* retention.pinnedSessions(root), [sessionDirName("a/b")])
        const error = yield* Effect.flip(retention.pin(root, "ghost", "x"))
        assert.strictEqual(error.code, "ENOENT")
        assert.isFalse(fs.existsSync(path.join(root, "ghost")))
        assert.deepStrictEqual(yield* retention.pinnedSessions(path.join(root, "missing")), [])
      }))

    it.effect("any entry at the pin's name counts as a pin; unpin unlinks a link, never its target", () =>
      Effect.gen(function*() {
        const { outside, retention, root } = yield* retentionSetup
        const dir = writeSession(root, "s", { turnCount: 0 })
        fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "retention-pin.json"))
        const other = writeSession(root, "t", { turnCount: 0 })
        fs.mkdirSync(path.join(other, "retention-pin.json"))
        assert.isTrue(yield* retention.isPinned(root, "s"))
        assert.isTrue(yield* retention.isPinned(root, "t"))
        assert.deepStrictEqual(yield* retention.pinnedSessions(root), ["s", "t"])
        assert.isTrue(yield* retention.unpin(root, "s"))
        assert.isFalse(yield* retention.unpin(root, "t"), "a directory at the pin's name is left alone")
        assert.isTrue(yield* retention.isPinned(root, "t"))
        assert.strictEqual(fs.readFileSync(path.join(outside, "secret.txt"), "utf8"), "outside the root\n")
      }))
  })

  describe("evictZeroTurnCompletedStore", () => {
    it.effect("removes only a completed, unpinned, not live store without turns", () =>
      Effect.gen(function*() {
        const { retention, root } = yield* retentionSetup
        const sfs = yield* SessionFs
        writeSession(root, "empty", { turnCount: 0 })
        writeSession(root, "worked", { turnCount: 3 })
        writeSession(root, "open", { status: "active", turnCount: 0 })
        writeSession(root, "pinned", { turnCount: 0 })
        writeSession(root, "held", { turnCount: 0 })
        writeSession(root, "broken", { manifest: "[]" })
        yield* retention.pin(root, "pinned", "keep")
        const lock = yield* sfs.tryLock(path.join(root, "held", "session.lock"))
        assert.strictEqual(lock._tag, "Acquired")
        for (const id of ["worked", "open", "pinned", "held", "broken", "ghost"]) {
          assert.isFalse(yield* retention.evictZeroTurnCompletedStore(root, id), id)
        }
        assert.isTrue(yield* retention.evictZeroTurnCompletedStore(root, "empty"))
        assert.deepStrictEqual(listed(root), ["broken", "held", "open", "pinned", "worked"])
        if (lock._tag === "Acquired") yield* lock.release
        assert.isTrue(yield* retention.evictZeroTurnCompletedStore(root, "held"))
      }))
  })

  describe("gcLegacy", () => {
    it.effect("removes history/ and logs/ beside the root, counts regular bytes, follows no link", () =>
      Effect.gen(function*() {
        const { base, outside, retention, root } = yield* retentionSetup
        const legacy = path.dirname(root)
        fs.mkdirSync(path.join(legacy, "history", "nested"), { recursive: true })
        fs.writeFileSync(path.join(legacy, "history", "a.json"), "0123456789")
        fs.writeFileSync(path.join(legacy, "history", "nested", "b.json"), "01234")
        fs.symlinkSync(path.join(outside, "secret.txt"), path.join(legacy, "history", "link.json"))
        fs.symlinkSync(path.join(outside, "victim"), path.join(legacy, "history", "nested", "dir-link"))
        fs.mkdirSync(path.join(legacy, "logs"))
        fs.writeFileSync(path.join(legacy, "logs", "t.jsonl"), "abcdefg")
        fs.mkdirSync(path.join(legacy, "checkpoints"))
        fs.writeFileSync(path.join(legacy, "checkpoints", "cp"), "keep")
        writeSession(root, "s")
        const outsideBefore = snapshot(outside)
        const sessionsBefore = snapshot(root)
        assert.strictEqual(yield* retention.gcLegacy(root), 22)
        assert.deepStrictEqual(fs.readdirSync(legacy).sort(), ["checkpoints", "sessions"])
        assert.strictEqual(fs.readFileSync(path.join(legacy, "checkpoints", "cp"), "utf8"), "keep")
        assert.deepStrictEqual(snapshot(outside), outsideBefore)
        assert.deepStrictEqual(snapshot(root), sessionsBefore)
        assert.strictEqual(yield* retention.gcLegacy(root), 0)
        assert.isTrue(fs.existsSync(base))
      }))

    it.effect("refuses to collect beside a custom sessions root, where history/ and logs/ are not the store's", () =>
      Effect.gen(function*() {
        const { base, retention } = yield* retentionSetup
        const custom = path.join(base, "sessions")
        fs.mkdirSync(custom)
        fs.mkdirSync(path.join(base, "history"))
        fs.writeFileSync(path.join(base, "history", "mine.txt"), "user data")
        const error = yield* Effect.flip(retention.gcLegacy(custom))
        assert.strictEqual(error.code, "EINVAL")
        assert.strictEqual(fs.readFileSync(path.join(base, "history", "mine.txt"), "utf8"), "user data")
      }))

    it.effect("unlinks a legacy folder that is a link without following it", () =>
      Effect.gen(function*() {
        const { outside, retention, root } = yield* retentionSetup
        const legacy = path.dirname(root)
        fs.symlinkSync(path.join(outside, "victim"), path.join(legacy, "logs"))
        const before = snapshot(outside)
        assert.strictEqual(yield* retention.gcLegacy(root), 0)
        assert.isFalse(fs.existsSync(path.join(legacy, "logs")))
        assert.deepStrictEqual(snapshot(outside), before)
      }))
  })
})
