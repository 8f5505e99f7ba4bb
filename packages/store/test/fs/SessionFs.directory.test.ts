/**
 * `SessionFs.openDirectory`, the held directory of the durability barrier (docs/format.md#permissions):
 * atomic writes of its children land in the directory that was opened, never through a link that
 * later takes its place or sits at the child's name; names must be plain; a closed handle refuses
 * to write; and an open session's barrier keeps writing into its own directory when the session
 * directory is swapped for a link.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir as makeTempDir } from "@logbook/testkit"
import { Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import { ev, nodeLayer, openLog, pathsOf, testRoot, turn } from "../fixtures/eventlogHelpers.ts"

const tempDir = makeTempDir("fs-dir")

const modeOf = (p: string): number => fs.statSync(p).mode & 0o777

describe("SessionFs.openDirectory", () => {
  it.effect("writes children atomically, 0600, with no temp file left, and rewrites them in place", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const dir = path.join(root, "held")
      yield* sfs.ensurePrivateDir(dir)
      const handle = yield* sfs.openDirectory(dir)
      yield* handle.writeAtomic("a.json", "first")
      yield* handle.writeAtomic("a.json", new TextEncoder().encode("second"))
      yield* handle.close
      assert.strictEqual(fs.readFileSync(path.join(dir, "a.json"), "utf8"), "second")
      assert.strictEqual(modeOf(path.join(dir, "a.json")), 0o600)
      assert.deepStrictEqual(fs.readdirSync(dir), ["a.json"])
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("streams a child's content in chunks, and a failing source leaves the old content and no temp file", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const handle = yield* sfs.openDirectory(root)
      const encode = (t: string) => new TextEncoder().encode(t)
      yield* handle.writeAtomicStream("big.json", Stream.fromIterable(["{\"entries\":[", "1,2", "]}"].map(encode)))
      const failing = Stream.concat(Stream.make(encode("partial")), Stream.fail("source broke"))
      const error = yield* Effect.flip(handle.writeAtomicStream("big.json", failing))
      yield* handle.close
      assert.strictEqual(error, "source broke")
      assert.strictEqual(fs.readFileSync(path.join(root, "big.json"), "utf8"), "{\"entries\":[1,2]}")
      assert.deepStrictEqual(fs.readdirSync(root), ["big.json"])
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("refuses a missing directory, a linked directory and names that are not plain", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const missing = yield* Effect.flip(sfs.openDirectory(path.join(root, "missing")))
      assert.strictEqual(missing.code, "ENOENT")
      fs.mkdirSync(path.join(root, "real"))
      fs.symlinkSync(path.join(root, "real"), path.join(root, "link"))
      const linked = yield* Effect.flip(sfs.openDirectory(path.join(root, "link")))
      assert.strictEqual(linked.code, "ELOOP")
      const handle = yield* sfs.openDirectory(path.join(root, "real"))
      for (const name of ["", ".", "..", "sub/a.json", "../escape.json"]) {
        const error = yield* Effect.flip(handle.writeAtomic(name, "x"))
        assert.strictEqual(error.code, "EINVAL", name)
      }
      yield* handle.close
      assert.deepStrictEqual(fs.readdirSync(path.join(root, "real")), [])
      assert.isFalse(fs.existsSync(path.join(root, "escape.json")))
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("refuses a link planted at the child and leaves its target untouched", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const dir = path.join(root, "held")
      const outside = path.join(root, "outside.json")
      fs.mkdirSync(dir)
      fs.writeFileSync(outside, "outside")
      fs.symlinkSync(outside, path.join(dir, "a.json"))
      const handle = yield* sfs.openDirectory(dir)
      const error = yield* Effect.flip(handle.writeAtomic("a.json", "inside"))
      yield* handle.close
      assert.strictEqual(error.code, "ELOOP")
      assert.strictEqual(error.path, path.join(dir, "a.json"))
      assert.strictEqual(fs.readFileSync(outside, "utf8"), "outside")
      assert.isTrue(fs.lstatSync(path.join(dir, "a.json")).isSymbolicLink())
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("keeps writing into the opened directory, never through a link swapped in at its path", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const dir = path.join(root, "held")
      const moved = path.join(root, "moved")
      const outside = path.join(root, "outside")
      fs.mkdirSync(dir)
      fs.mkdirSync(outside)
      const handle = yield* sfs.openDirectory(dir)
      fs.renameSync(dir, moved)
      fs.symlinkSync(outside, dir)
      // The walk of platforms without /proc refuses the link instead; either way nothing goes outside.
      const result = yield* Effect.result(handle.writeAtomic("a.json", "held"))
      yield* handle.close
      assert.deepStrictEqual(fs.readdirSync(outside), [], "nothing was written through the link")
      if (result._tag === "Success") {
        assert.strictEqual(fs.readFileSync(path.join(moved, "a.json"), "utf8"), "held")
      } else {
        assert.strictEqual(
          process.platform === "linux",
          false,
          `linux writes through the held descriptor: ${result.failure.message}`
        )
      }
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("fails EBADF after close without touching the descriptor number", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const handle = yield* sfs.openDirectory(root)
      yield* handle.close
      yield* handle.close
      const error = yield* Effect.flip(handle.writeAtomic("a.json", "late"))
      assert.strictEqual(error.code, "EBADF")
      assert.isFalse(fs.existsSync(path.join(root, "a.json")))
    }).pipe(Effect.provide(SessionFs.layerNode)))
})

describe("An open session's barrier and a swapped session directory", () => {
  it.effect("keeps publishing into the session's own directory and writes nothing through the link", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* testRoot
      const paths = pathsOf(root, "swapped")
      const log = yield* openLog(root, "swapped")
      for (const e of turn("one")) yield* log.append(e)
      const moved = path.join(root, "moved-away")
      fs.renameSync(paths.dir, moved)
      fs.mkdirSync(path.join(outside, "dir", "index"), { recursive: true })
      fs.symlinkSync(path.join(outside, "dir"), paths.dir)
      const result = yield* Effect.result(Effect.forEach([ev.turnStarted(), ev.msg("two"), ev.completed()], log.append))
      assert.deepStrictEqual(fs.readdirSync(path.join(outside, "dir")), ["index"], "nothing was written outside")
      assert.deepStrictEqual(fs.readdirSync(path.join(outside, "dir", "index")), [])
      if (result._tag === "Success") {
        const manifest = JSON.parse(fs.readFileSync(path.join(moved, "manifest.json"), "utf8")) as Record<
          string,
          unknown
        >
        assert.strictEqual(manifest["turn_count"], 2, "the held directory received the barrier")
      }
      assert.strictEqual(result._tag === "Success", process.platform === "linux")
    }).pipe(Effect.provide(nodeLayer())))
})
