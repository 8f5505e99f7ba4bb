/**
 * Retention against planted links: a link child pointing outside the root, a link in place of
 * `manifest.json`, a link swapped in between listing and removal, a link inside a session, and
 * links in place of the root or the trash. Nothing outside the root may be read, written or
 * deleted.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import { TRASH_DIR } from "../../src/retention/internal/retentionRemove.ts"
import { Retention } from "../../src/retention/Retention.ts"
import {
  isoDaysAgo,
  listed,
  NOW,
  retentionLayer,
  retentionSetup,
  snapshot,
  workspace,
  writeSession
} from "../fixtures/retention-helpers.ts"

const policy = { maxSessions: 0, maxAgeDays: 1 }

layer(retentionLayer)("Retention and links", (it) => {
  it.effect("a link child pointing at a session-looking directory outside the root is neither swept nor removed", () =>
    Effect.gen(function*() {
      const { outside, retention, root } = yield* retentionSetup
      writeSession(outside, "old-done", { turnCount: 0, updatedAt: isoDaysAgo(90) })
      writeSession(outside, "old-active", { status: "active", updatedAt: isoDaysAgo(90) })
      fs.symlinkSync(path.join(outside, "old-done"), path.join(root, "link-done"))
      fs.symlinkSync(path.join(outside, "old-active"), path.join(root, "link-active"))
      writeSession(root, "real", { turnCount: 0 })
      const before = snapshot(outside)
      const report = yield* retention.apply(root, policy)
      assert.deepStrictEqual(report, { marked: [], removed: [{ id: "real", phase: "zero-turn" }] })
      assert.deepStrictEqual(snapshot(outside), before)
      assert.deepStrictEqual(listed(root), ["link-active", "link-done"])
      assert.isFalse(yield* retention.evictZeroTurnCompletedStore(root, "link-done"))
      assert.isFalse(yield* retention.isPinned(root, "link-done"))
      const pinError = yield* Effect.flip(retention.pin(root, "link-done", "x"))
      assert.strictEqual(pinError.code, "ENOTDIR")
      assert.deepStrictEqual(snapshot(outside), before)
    }))

  it.effect("a link in place of manifest.json is never read through nor written through", () =>
    Effect.gen(function*() {
      const { outside, retention, root } = yield* retentionSetup
      const decoy = writeSession(outside, "decoy", { status: "active", turnCount: 0, updatedAt: isoDaysAgo(90) })
      const dir = writeSession(root, "s", { status: "active", updatedAt: isoDaysAgo(90) })
      fs.rmSync(path.join(dir, "manifest.json"))
      fs.symlinkSync(path.join(decoy, "manifest.json"), path.join(dir, "manifest.json"))
      const before = snapshot(outside)
      const report = yield* retention.apply(root, policy)
      assert.deepStrictEqual(report, { marked: [], removed: [] })
      assert.deepStrictEqual(snapshot(outside), before)
      assert.deepStrictEqual(listed(root), ["s"])
      assert.isTrue(fs.lstatSync(path.join(dir, "manifest.json")).isSymbolicLink())
    }))

  it.effect("a link inside a removed session is unlinked, and its target outside survives", () =>
    Effect.gen(function*() {
      const { outside, retention, root } = yield* retentionSetup
      const dir = writeSession(root, "s", { turnCount: 0 })
      fs.symlinkSync(path.join(outside, "victim"), path.join(dir, "derived", "dir-link"))
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "file-link"))
      const before = snapshot(outside)
      const report = yield* retention.apply(root, policy)
      assert.deepStrictEqual(report.removed, [{ id: "s", phase: "zero-turn" }])
      assert.deepStrictEqual(listed(root), [])
      assert.deepStrictEqual(snapshot(outside), before)
    }))

  it.effect("a symlinked sessions root is left alone", () =>
    Effect.gen(function*() {
      const { base, outside, retention } = yield* retentionSetup
      writeSession(outside, "s", { turnCount: 0 })
      writeSession(outside, "a", { status: "active", updatedAt: isoDaysAgo(90) })
      const linkRoot = path.join(base, "linked-sessions")
      fs.symlinkSync(outside, linkRoot)
      const before = snapshot(outside)
      assert.deepStrictEqual(yield* retention.apply(linkRoot, policy), { marked: [], removed: [] })
      assert.deepStrictEqual(yield* retention.pinnedSessions(linkRoot), [])
      assert.deepStrictEqual(snapshot(outside), before)
    }))

  it.effect("a symlinked retention-pin.json pins the session: retention keeps it and never touches the target", () =>
    Effect.gen(function*() {
      const { outside, retention, root } = yield* retentionSetup
      const dir = writeSession(root, "s", { turnCount: 0, updatedAt: isoDaysAgo(90) })
      fs.writeFileSync(path.join(outside, "pin-target"), "not a pin")
      fs.symlinkSync(path.join(outside, "pin-target"), path.join(dir, "retention-pin.json"))
      fs.symlinkSync(
        path.join(outside, "dangling"),
        path.join(writeSession(root, "d", { turnCount: 0 }), "retention-pin.json")
      )
      const before = snapshot(outside)
      assert.deepStrictEqual(yield* retention.apply(root, policy), { marked: [], removed: [] })
      assert.deepStrictEqual(listed(root), ["d", "s"])
      assert.isTrue(yield* retention.isPinned(root, "s"))
      assert.deepStrictEqual(yield* retention.pinnedSessions(root), ["d", "s"])
      assert.isFalse(yield* retention.evictZeroTurnCompletedStore(root, "s"))
      assert.deepStrictEqual(snapshot(outside), before)
      // unpin unlinks the link, never its target.
      assert.isTrue(yield* retention.unpin(root, "s"))
      assert.strictEqual(fs.readFileSync(path.join(outside, "pin-target"), "utf8"), "not a pin")
      assert.isFalse(yield* retention.isPinned(root, "s"))
    }))

  it.effect("a root with a '..' component is refused, and the directory it would normalise to is untouched", () =>
    Effect.gen(function*() {
      const { base, retention } = yield* retentionSetup
      const real = path.join(base, "b")
      writeSession(real, "s", { turnCount: 0 })
      const before = snapshot(real)
      const error = yield* Effect.flip(retention.apply(`${base}/a/../b`, policy))
      assert.strictEqual(error.code, "EINVAL")
      assert.deepStrictEqual(snapshot(real), before)
    }))

  it.effect("a link planted in place of the trash is unlinked, never followed", () =>
    Effect.gen(function*() {
      const { outside, retention, root } = yield* retentionSetup
      fs.symlinkSync(path.join(outside, "victim"), path.join(root, TRASH_DIR))
      writeSession(root, "s", { turnCount: 0 })
      const before = snapshot(outside)
      const report = yield* retention.apply(root, policy)
      assert.deepStrictEqual(report.removed, [{ id: "s", phase: "zero-turn" }])
      assert.isTrue(fs.lstatSync(path.join(root, TRASH_DIR)).isDirectory())
      assert.deepStrictEqual(snapshot(outside), before)
    }))
})

/**
 * A SessionFs that, at a chosen moment, swaps the session directory `root/s` for a link to a
 * session-looking directory outside the root (moving the real one aside, outside the root too),
 * as an attacker racing retention would: right after enumeration read the manifest, right after
 * the re-inspection before removal read it, or just before the rename into the trash.
 */
type Trigger = "enumeration" | "re-inspection" | "rename"

/** Which read of the manifest precedes each window: the sweep reads it first, then enumeration, then re-inspection. */
const manifestReadBefore = { enumeration: 2, "re-inspection": 3, rename: 0 } as const

const swappingLayer = (
  trigger: Trigger,
  paths: { readonly dir: string; readonly aside: string; readonly decoy: string }
) =>
  Layer.effect(
    SessionFs,
    Effect.gen(function*() {
      const inner = yield* SessionFs
      let manifestReads = 0
      let swapped = false
      const swap = () =>
        Effect.sync(() => {
          if (swapped) return
          swapped = true
          fs.renameSync(paths.dir, paths.aside)
          fs.symlinkSync(paths.decoy, paths.dir)
        })
      return SessionFs.of({
        ...inner,
        readFileNoFollow: (p) =>
          Effect.gen(function*() {
            const result = yield* inner.readFileNoFollow(p)
            if (p === path.join(paths.dir, "manifest.json") && ++manifestReads === manifestReadBefore[trigger]) {
              yield* swap()
            }
            return result
          }),
        rename: (from, to) =>
          Effect.gen(function*() {
            if (trigger === "rename" && from === paths.dir) yield* swap()
            return yield* inner.rename(from, to)
          })
      })
    })
  ).pipe(Layer.provide(SessionFs.layerNode))

describe("Retention and a link swapped in between listing and removal", () => {
  for (const trigger of ["enumeration", "re-inspection", "rename"] as const) {
    it.effect(`removes nothing outside the root and reports nothing removed (swap at ${trigger})`, () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const w = yield* workspace
        const dir = writeSession(w.root, "s", { turnCount: 0 })
        const decoy = writeSession(w.outside, "decoy", { turnCount: 0 })
        const aside = path.join(w.outside, "moved-aside")
        const decoyBefore = snapshot(decoy)
        const sessionBefore = snapshot(dir)
        const report = yield* Effect.gen(function*() {
          const retention = yield* Retention
          return yield* retention.apply(w.root, policy)
        }).pipe(Effect.provide(Retention.layer.pipe(Layer.provide(swappingLayer(trigger, { dir, aside, decoy })))))
        assert.deepStrictEqual(report.removed, [])
        assert.deepStrictEqual(snapshot(decoy), decoyBefore)
        assert.deepStrictEqual(snapshot(aside), sessionBefore)
        assert.deepStrictEqual(snapshot(w.outside)["victim/precious.txt"], "do not delete\n")
        // Either the planted link is still there (declined) or it was moved aside and unlinked.
        const left = fs.lstatSync(dir, { throwIfNoEntry: false })
        assert.isTrue(left === undefined || left.isSymbolicLink())
        const trash = path.join(w.root, TRASH_DIR)
        assert.deepStrictEqual(fs.existsSync(trash) ? fs.readdirSync(trash) : [], [])
      }))
  }
})
