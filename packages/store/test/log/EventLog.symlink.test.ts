/**
 * Planted symbolic links (docs/format.md#permissions: never follow a link, never leave the root): at the session directory, its
 * `index/` and `derived/`, `events.jsonl`, `manifest.json`, `index/turns.json` and
 * `session.lock`, before open and while a session is open. Nothing outside the root may be
 * read into the session, written or created; refusals are typed errors and leave neither a
 * held lock nor a poisoned registry entry behind. Derived paths never block recording (issue 33,
 * item 12): a link or a file at `index/` or `derived/`, a directory at `manifest.json` or
 * `index/turns.json`, a link at the cap marker are displaced and rebuilt by the open. A sessions
 * root with a `..` component is refused, not normalised (item 3).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import type { SessionPaths } from "../../src/log/SessionPaths.ts"
import { appendAll, ev, nodeLayer, openLog, pathsOf, testRoot, turn } from "../fixtures/eventlogHelpers.ts"
import { assertDiskConsistent } from "../fixtures/eventlogOracle.ts"

/** Every file below `dir` with its content (links as `-> target`), to prove nothing changed. */
const tree = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d)) {
      const p = path.join(d, name)
      const st = fs.lstatSync(p)
      if (st.isSymbolicLink()) out[p] = `-> ${fs.readlinkSync(p)}`
      else if (st.isDirectory()) walk(p)
      else out[p] = `${st.mode & 0o777}:${fs.readFileSync(p, "utf8")}`
    }
  }
  walk(dir)
  return out
}

/** An outside directory holding a decoy manifest, index, log and lock file. */
const plantDecoys = (outside: string) => {
  fs.mkdirSync(path.join(outside, "dir"), { recursive: true })
  fs.writeFileSync(path.join(outside, "manifest.json"), "{\"decoy\":true}", { mode: 0o644 })
  fs.writeFileSync(path.join(outside, "turns.json"), "{\"entries\":[]}", { mode: 0o644 })
  fs.writeFileSync(path.join(outside, "events.jsonl"), "outside log\n", { mode: 0o644 })
  fs.writeFileSync(path.join(outside, "lock"), "", { mode: 0o644 })
}

/** Writes a small session through the API and closes it. */
const seed = (root: string, id: string) =>
  Effect.scoped(Effect.gen(function*() {
    yield* appendAll(yield* openLog(root, id), turn("seed"))
  }))

const relink = (at: string, target: string) => {
  fs.rmSync(at, { recursive: true, force: true })
  fs.symlinkSync(target, at)
}

describe("EventLog and planted symlinks", () => {
  const refusedAtOpen: ReadonlyArray<
    readonly [string, (p: SessionPaths, outside: string) => void, "CreateDirError" | "StoreIoError"]
  > = [
    ["the session directory", (p, o) => relink(p.dir, path.join(o, "dir")), "CreateDirError"],
    ["events.jsonl", (p, o) => relink(p.events, path.join(o, "events.jsonl")), "StoreIoError"],
    ["manifest.json", (p, o) => relink(p.manifest, path.join(o, "manifest.json")), "StoreIoError"],
    ["a dangling manifest.json", (p, o) => relink(p.manifest, path.join(o, "missing.json")), "StoreIoError"],
    ["index/turns.json", (p, o) => relink(p.turns, path.join(o, "turns.json")), "StoreIoError"]
  ]
  for (const [where, plant, tag] of refusedAtOpen) {
    it.effect(`a link at ${where} makes open fail with ${tag} and touches nothing outside`, () =>
      Effect.gen(function*() {
        const { root, outside } = yield* testRoot
        const sfs = yield* SessionFs
        const paths = pathsOf(root, "s")
        yield* seed(root, "s")
        plantDecoys(outside)
        plant(paths, outside)
        const before = tree(outside)
        const own = tree(paths.dir)
        const error = yield* Effect.flip(Effect.scoped(openLog(root, "s")))
        assert.strictEqual(error._tag, tag)
        assert.deepStrictEqual(tree(paths.dir), own, "the session's own files are unchanged")
        if (error._tag === "StoreIoError") assert.strictEqual(error.code, "ELOOP")
        assert.deepStrictEqual(tree(outside), before, "nothing outside the root changed")
        assert.isFalse(fs.existsSync(path.join(outside, "missing.json")))
        if (fs.existsSync(paths.lock) && !fs.lstatSync(paths.dir).isSymbolicLink()) {
          assert.strictEqual(yield* sfs.probeLock(paths.lock), "free", "the lock was released")
        }
        // Once the link is gone the same registry opens the session normally.
        if (fs.lstatSync(paths.dir).isSymbolicLink()) fs.unlinkSync(paths.dir)
        else fs.rmSync(paths.dir, { recursive: true })
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "s")
          assert.strictEqual(log.lockState, "exclusive")
          yield* appendAll(log, turn("fresh"))
        }))
        assertDiskConsistent(paths)
      }).pipe(Effect.provide(nodeLayer())))
  }

  const displaced: ReadonlyArray<readonly [string, (p: SessionPaths, outside: string) => void]> = [
    ["a link at index/", (p, o) => relink(p.indexDir, path.join(o, "dir"))],
    ["a link at derived/", (p, o) => relink(p.derivedDir, path.join(o, "dir"))],
    ["a regular file at index/", (p) => {
      fs.rmSync(p.indexDir, { recursive: true })
      fs.writeFileSync(p.indexDir, "not a directory")
    }],
    ["a regular file at derived/", (p) => {
      fs.rmSync(p.derivedDir, { recursive: true })
      fs.writeFileSync(p.derivedDir, "not a directory")
    }],
    ["a directory at manifest.json", (p) => {
      fs.rmSync(p.manifest)
      fs.mkdirSync(p.manifest)
    }],
    ["a directory at index/turns.json", (p) => {
      fs.rmSync(p.turns)
      fs.mkdirSync(p.turns)
    }],
    ["a link at index/pending-cap-rewrite.json", (p, o) => fs.symlinkSync(path.join(o, "manifest.json"), p.marker)]
  ]
  for (const [where, plant] of displaced) {
    it.effect(`${where} is displaced and rebuilt on open, and recording goes on`, () =>
      Effect.gen(function*() {
        const { root, outside } = yield* testRoot
        const paths = pathsOf(root, "s")
        yield* seed(root, "s")
        plantDecoys(outside)
        plant(paths, outside)
        const before = tree(outside)
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "s")
          yield* appendAll(log, turn("after"))
        }))
        assert.deepStrictEqual(tree(outside), before, "nothing outside the root changed")
        for (const dir of [paths.indexDir, paths.derivedDir]) assert.isTrue(fs.lstatSync(dir).isDirectory(), dir)
        assert.isTrue(fs.lstatSync(paths.manifest).isFile())
        assert.isFalse(fs.existsSync(paths.marker))
        const disk = assertDiskConsistent(paths)
        assert.strictEqual(disk.state.turnCount, 2, "both turns are in the log and its metadata")
        // What was displaced (not a link) is kept beside, never deleted.
        const kept = fs.readdirSync(path.dirname(paths.turns)).concat(fs.readdirSync(paths.dir))
          .filter((name) => name.includes(".displaced-"))
        assert.strictEqual(kept.length, where.startsWith("a link") ? 0 : 1, kept.join(", "))
      }).pipe(Effect.provide(nodeLayer())))
  }

  it.effect("a link at the sessions root itself is refused", () =>
    Effect.gen(function*() {
      const { base, outside } = yield* testRoot
      plantDecoys(outside)
      const root = path.join(base, "linked-root")
      fs.symlinkSync(path.join(outside, "dir"), root)
      const before = tree(outside)
      const error = yield* Effect.flip(Effect.scoped(openLog(root, "s")))
      assert.strictEqual(error._tag, "CreateDirError")
      assert.deepStrictEqual(tree(outside), before)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a link at session.lock leaves the session usable but unlocked and its target untouched", () =>
    Effect.gen(function*() {
      const { root, outside } = yield* testRoot
      const paths = pathsOf(root, "s")
      yield* seed(root, "s")
      plantDecoys(outside)
      relink(paths.lock, path.join(outside, "lock"))
      const before = tree(outside)
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "s")
        assert.strictEqual(log.lockState, "unavailable")
        yield* appendAll(log, turn("unlocked"))
      }))
      assert.deepStrictEqual(tree(outside), before)
      assertDiskConsistent(paths)
      // A dangling link is not followed to create its target either.
      relink(paths.lock, path.join(outside, "created-by-lock"))
      yield* Effect.scoped(Effect.gen(function*() {
        assert.strictEqual((yield* openLog(root, "s")).lockState, "unavailable")
      }))
      assert.isFalse(fs.existsSync(path.join(outside, "created-by-lock")))
    }).pipe(Effect.provide(nodeLayer())))

  for (const which of ["manifest.json", "index/turns.json"] as const) {
    it.effect(`a link planted at ${which} while the session is open makes the next barrier fail, not write through it`, () =>
      Effect.gen(function*() {
        const { root, outside } = yield* testRoot
        const paths = pathsOf(root, "live")
        plantDecoys(outside)
        const log = yield* openLog(root, "live")
        yield* appendAll(log, turn("before"))
        const at = which === "manifest.json" ? paths.manifest : paths.turns
        relink(at, path.join(outside, which === "manifest.json" ? "manifest.json" : "turns.json"))
        const before = tree(outside)
        yield* appendAll(log, [ev.turnStarted(), ev.msg("after")])
        const error = yield* Effect.flip(log.append(ev.completed()))
        assert.strictEqual(error._tag, "StoreIoError")
        assert.deepStrictEqual(tree(outside), before)
        // Removing the link lets the retried barrier publish everything.
        fs.rmSync(at)
        yield* log.flush
        const disk = assertDiskConsistent(paths)
        assert.strictEqual(disk.disk.manifest?.turn_count, 2)
      }).pipe(Effect.provide(nodeLayer())))
  }

  it.effect("events.jsonl swapped for a link while open keeps receiving appends through the open descriptor only", () =>
    Effect.gen(function*() {
      const { root, outside } = yield* testRoot
      const paths = pathsOf(root, "swap")
      plantDecoys(outside)
      const log = yield* openLog(root, "swap")
      yield* appendAll(log, turn("one"))
      fs.renameSync(paths.events, path.join(root, "moved-away.jsonl"))
      fs.symlinkSync(path.join(outside, "events.jsonl"), paths.events)
      const before = tree(outside)
      yield* appendAll(log, turn("two"))
      assert.deepStrictEqual(tree(outside), before, "the outside log was not written")
      const error = yield* Effect.flip(log.reconstructTurn(2))
      assert.strictEqual(error._tag, "StoreIoError", "reads refuse the link")
    }).pipe(Effect.provide(nodeLayer())))
})

describe("EventLog and a sessions root with a '..' component", () => {
  it.effect("a root spelled <ws>/a/../b is refused, not normalised to <ws>/b", () =>
    Effect.gen(function*() {
      const { base } = yield* testRoot
      const root = `${base}/a/../b`
      const error = yield* Effect.flip(Effect.scoped(openLog(root, "s")))
      assert.strictEqual(error._tag, "CreateDirError")
      if (error._tag === "CreateDirError") assert.strictEqual(error.code, "EINVAL")
      assert.match(error.message, /'\.\.' component/)
      assert.isFalse(fs.existsSync(path.join(base, "b")), "nothing was created at the normalised path")
      assert.isFalse(fs.existsSync(path.join(base, "a")))
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a relative root with a '..' component is refused too", () =>
    Effect.gen(function*() {
      const { base } = yield* testRoot
      const relative = path.relative(process.cwd(), path.join(base, "a"))
      const error = yield* Effect.flip(Effect.scoped(openLog(`${relative}/../b`, "s")))
      assert.strictEqual(error._tag, "CreateDirError")
      assert.isFalse(fs.existsSync(path.join(base, "b")))
    }).pipe(Effect.provide(nodeLayer())))
})
