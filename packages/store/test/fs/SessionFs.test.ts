/**
 * SessionFs on a real temporary directory: permissions, symlink refusal, atomic replacement,
 * exact range reads and chunked streaming, and link-safe removal.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir as makeTempDir } from "@logbook/testkit"
import { Effect, Option, Stream } from "effect"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import type { CreateDirError, StoreIoError } from "../../src/fs/StoreError.ts"

const tempDir = makeTempDir("fs")

const modeOf = (p: string): number => fs.statSync(p).mode & 0o777

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)
const text = (data: Uint8Array): string => new TextDecoder().decode(data)

const tempFiles = (dir: string): Array<string> => fs.readdirSync(dir).filter((n) => n.endsWith(".tmp"))

describe("SessionFs", () => {
  describe("permissions", () => {
    it.effect("ensurePrivateDir creates every missing directory with mode 0700", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const target = path.join(root, "a", "b", "c")
        yield* sfs.ensurePrivateDir(target)
        for (const dir of ["a", "a/b", "a/b/c"]) {
          assert.strictEqual(modeOf(path.join(root, dir)), 0o700, dir)
        }
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("ensurePrivateDir forces 0700 on a pre-existing 0755 directory", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const target = path.join(root, "sessions")
        fs.mkdirSync(target, { mode: 0o755 })
        fs.chmodSync(target, 0o755)
        yield* sfs.ensurePrivateDir(target)
        assert.strictEqual(modeOf(target), 0o700)
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("openAppend creates a 0600 file and re-applies 0600 to an existing 0644 file", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const fresh = path.join(root, "events.jsonl")
        const file = yield* sfs.openAppend(fresh)
        yield* file.close
        assert.strictEqual(modeOf(fresh), 0o600)
        const loose = path.join(root, "loose.jsonl")
        fs.writeFileSync(loose, "x\n", { mode: 0o644 })
        fs.chmodSync(loose, 0o644)
        const reopened = yield* sfs.openAppend(loose)
        yield* reopened.close
        assert.strictEqual(modeOf(loose), 0o600)
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("writeAtomic produces a 0600 file and createFileIfAbsent a 0600 empty file", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const manifest = path.join(root, "manifest.json")
        yield* sfs.writeAtomic(manifest, "{}")
        assert.strictEqual(modeOf(manifest), 0o600)
        const lock = path.join(root, "session.lock")
        yield* sfs.createFileIfAbsent(lock)
        assert.strictEqual(modeOf(lock), 0o600)
        assert.strictEqual(fs.statSync(lock).size, 0)
      }).pipe(Effect.provide(SessionFs.layerNode)))
  })

  describe("symlink and traversal refusal", () => {
    it.effect("ensurePrivateDir refuses a symlinked final component and leaves its target's mode alone", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const real = path.join(root, "real")
        fs.mkdirSync(real, { mode: 0o755 })
        fs.chmodSync(real, 0o755)
        fs.symlinkSync(real, path.join(root, "link"))
        const error: CreateDirError = yield* Effect.flip(sfs.ensurePrivateDir(path.join(root, "link")))
        assert.strictEqual(error._tag, "CreateDirError")
        assert.strictEqual(error.code, "ELOOP")
        assert.match(error.message, /^failed to create session directory /)
        assert.strictEqual(modeOf(real), 0o755)
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("every path operation refuses a '..' component", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const sneaky = path.join(root, "sessions") + "/../outside"
        const dirError = yield* Effect.flip(sfs.ensurePrivateDir(sneaky))
        assert.strictEqual(dirError.code, "EINVAL")
        const writeError = yield* Effect.flip(sfs.writeAtomic(sneaky + "/f.json", "x"))
        assert.strictEqual(writeError.code, "EINVAL")
        const removeError = yield* Effect.flip(sfs.removeTree(sneaky))
        assert.strictEqual(removeError.code, "EINVAL")
        assert.isFalse(fs.existsSync(path.join(root, "outside")))
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("ensurePrivateDir refuses an existing regular file", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        fs.writeFileSync(path.join(root, "file"), "")
        const error = yield* Effect.flip(sfs.ensurePrivateDir(path.join(root, "file", "sub")))
        assert.strictEqual(error.code, "ENOTDIR")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("ensurePrivateDir tolerates a symlinked ancestor whose target stays inside its parent", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        fs.mkdirSync(path.join(root, "private"))
        fs.symlinkSync(path.join(root, "private"), path.join(root, "alias"))
        yield* sfs.ensurePrivateDir(path.join(root, "alias", "sessions", "s1"))
        assert.strictEqual(modeOf(path.join(root, "private", "sessions", "s1")), 0o700)
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("ensurePrivateDir refuses a symlinked ancestor that leaves its parent", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        fs.mkdirSync(path.join(root, "workspace"))
        fs.mkdirSync(path.join(root, "elsewhere"))
        fs.symlinkSync(path.join(root, "elsewhere"), path.join(root, "workspace", "escape"))
        const error = yield* Effect.flip(sfs.ensurePrivateDir(path.join(root, "workspace", "escape", "sessions")))
        assert.strictEqual(error.code, "ELOOP")
        assert.isFalse(fs.existsSync(path.join(root, "elsewhere", "sessions")))
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("openAppend refuses a symlinked file and writes nothing to its target", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const target = path.join(root, "target")
        fs.writeFileSync(target, "secret")
        fs.symlinkSync(target, path.join(root, "events.jsonl"))
        const error: StoreIoError = yield* Effect.flip(sfs.openAppend(path.join(root, "events.jsonl")))
        assert.strictEqual(error.code, "ELOOP")
        assert.strictEqual(error.operation, "openAppend")
        assert.strictEqual(fs.readFileSync(target, "utf8"), "secret")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("readFileNoFollow reports a symlinked file as an ELOOP error, not as missing", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        fs.writeFileSync(path.join(root, "target.json"), "{}")
        fs.symlinkSync(path.join(root, "target.json"), path.join(root, "manifest.json"))
        const error = yield* Effect.flip(sfs.readFileNoFollow(path.join(root, "manifest.json")))
        assert.strictEqual(error.code, "ELOOP")
        assert.match(error.message, /^session store IO error at .*manifest\.json: .*\(readFileNoFollow\)$/)
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("readFileNoFollow returns none for a missing file or a missing parent and the bytes otherwise", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        assert.isTrue(Option.isNone(yield* sfs.readFileNoFollow(path.join(root, "manifest.json"))))
        assert.isTrue(Option.isNone(yield* sfs.readFileNoFollow(path.join(root, "nope", "manifest.json"))))
        fs.writeFileSync(path.join(root, "manifest.json"), "{\"a\":1}")
        const read = yield* sfs.readFileNoFollow(path.join(root, "manifest.json"))
        assert.deepStrictEqual(Option.map(read, text), Option.some("{\"a\":1}"))
        const dirError = yield* Effect.flip(sfs.readFileNoFollow(root))
        assert.strictEqual(dirError.code, "EISDIR")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("writeAtomic refuses a symlinked or directory destination and leaves the link target unchanged", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const target = path.join(root, "target.json")
        fs.writeFileSync(target, "old")
        fs.symlinkSync(target, path.join(root, "manifest.json"))
        const linkError = yield* Effect.flip(sfs.writeAtomic(path.join(root, "manifest.json"), "new"))
        assert.strictEqual(linkError.code, "ELOOP")
        assert.strictEqual(fs.readFileSync(target, "utf8"), "old")
        assert.isTrue(fs.lstatSync(path.join(root, "manifest.json")).isSymbolicLink())
        fs.mkdirSync(path.join(root, "dir.json"))
        const dirError = yield* Effect.flip(sfs.writeAtomic(path.join(root, "dir.json"), "new"))
        assert.strictEqual(dirError.code, "EISDIR")
        assert.deepStrictEqual(tempFiles(root), [])
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("createFileIfAbsent keeps an existing file's content and refuses a symlink", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const lock = path.join(root, "session.lock")
        fs.writeFileSync(lock, "keep")
        yield* sfs.createFileIfAbsent(lock)
        assert.strictEqual(fs.readFileSync(lock, "utf8"), "keep")
        fs.symlinkSync(lock, path.join(root, "link.lock"))
        const error = yield* Effect.flip(sfs.createFileIfAbsent(path.join(root, "link.lock")))
        assert.strictEqual(error.code, "ELOOP")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("listDir returns sorted direct children and refuses a symlinked directory", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        for (const name of ["b", "a", "c"]) fs.mkdirSync(path.join(root, name))
        fs.writeFileSync(path.join(root, "a", "nested"), "")
        assert.deepStrictEqual(yield* sfs.listDir(root), ["a", "b", "c"])
        fs.symlinkSync(path.join(root, "a"), path.join(root, "link"))
        const error = yield* Effect.flip(sfs.listDir(path.join(root, "link")))
        assert.strictEqual(error.code, "ELOOP")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("listDirTypes gives each child's type as lstat does, sorted, and refuses a symlinked directory", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        fs.mkdirSync(path.join(root, "d"))
        fs.writeFileSync(path.join(root, "f"), "x")
        fs.symlinkSync(path.join(root, "d"), path.join(root, "c-link"))
        execFileSync("mkfifo", [path.join(root, "a-fifo")])
        const entries = yield* sfs.listDirTypes(root)
        assert.deepStrictEqual(entries.map((e) => e.name), yield* sfs.listDir(root))
        const lstats = yield* sfs.lstatMany(entries.map((e) => path.join(root, e.name)))
        assert.deepStrictEqual(entries.map((e) => e.type), lstats.map((info) => info?.type))
        assert.deepStrictEqual(entries.map((e) => e.type), ["Other", "SymbolicLink", "Directory", "File"])
        const error = yield* Effect.flip(sfs.listDirTypes(path.join(root, "c-link")))
        assert.strictEqual(error.code, "ELOOP")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("lstat describes files, directories and links without following them", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        fs.writeFileSync(path.join(root, "f"), "12345")
        fs.symlinkSync(path.join(root, "f"), path.join(root, "l"))
        const file = yield* sfs.lstat(path.join(root, "f"))
        assert.deepStrictEqual(Option.map(file, (i) => `${i.type}:${i.size}`), Option.some("File:5"))
        const link = yield* sfs.lstat(path.join(root, "l"))
        assert.deepStrictEqual(Option.map(link, (i) => i.type), Option.some("SymbolicLink" as const))
        const dir = yield* sfs.lstat(root)
        assert.deepStrictEqual(Option.map(dir, (i) => i.type), Option.some("Directory" as const))
        assert.isTrue(Option.isNone(yield* sfs.lstat(path.join(root, "missing"))))
      }).pipe(Effect.provide(SessionFs.layerNode)))
  })

  describe("append and atomic write", () => {
    it.effect("an append file writes, reports its size, truncates, and refuses use after close", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const p = path.join(root, "events.jsonl")
        const file = yield* sfs.openAppend(p)
        yield* file.write(bytes("one\n"))
        yield* file.write(bytes("two\n"))
        yield* file.datasync
        assert.strictEqual(yield* file.size, 8)
        yield* file.truncate(4)
        yield* file.write(bytes("three\n"))
        assert.strictEqual(fs.readFileSync(p, "utf8"), "one\nthree\n")
        yield* file.close
        yield* file.close
        const error = yield* Effect.flip(file.write(bytes("late\n")))
        assert.strictEqual(error.code, "EBADF")
        const again = yield* sfs.openAppend(p)
        yield* again.write(bytes("four\n"))
        yield* again.close
        assert.strictEqual(fs.readFileSync(p, "utf8"), "one\nthree\nfour\n")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("writeAtomic replaces the content, creates a missing parent 0700 and leaves no temp files", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const dir = path.join(root, "index")
        const p = path.join(dir, "turns.json")
        yield* sfs.writeAtomic(p, "first")
        yield* sfs.writeAtomic(p, bytes("second"))
        assert.strictEqual(fs.readFileSync(p, "utf8"), "second")
        assert.strictEqual(modeOf(dir), 0o700)
        assert.deepStrictEqual(fs.readdirSync(dir), ["turns.json"])
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("writeAtomicStream writes a streamed content and drops the temp file when the source fails", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const p = path.join(root, "events.jsonl")
        fs.writeFileSync(p, "a\nb\nc\n")
        // The new content is a suffix of the file it replaces, as in a cap rewrite.
        yield* sfs.writeAtomicStream(
          p,
          Stream.concat(Stream.make(bytes("cp\n")), sfs.stream(p, { start: 2, chunkSize: 1 }))
        )
        assert.strictEqual(fs.readFileSync(p, "utf8"), "cp\nb\nc\n")
        const error = yield* Effect.flip(sfs.writeAtomicStream(
          p,
          Stream.concat(Stream.make(bytes("partial")), Stream.fail("source broke" as const))
        ))
        assert.strictEqual(error, "source broke")
        assert.strictEqual(fs.readFileSync(p, "utf8"), "cp\nb\nc\n")
        assert.deepStrictEqual(tempFiles(root), [])
      }).pipe(Effect.provide(SessionFs.layerNode)))
  })

  describe("reads", () => {
    const content = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7 + 3) % 251)

    it.effect("readRange returns exactly the requested bytes and fails on a short read", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const p = path.join(root, "events.jsonl")
        fs.writeFileSync(p, content)
        for (const [start, end] of [[0, 0], [0, 1], [10, 500], [999, 1000], [0, 1000]] as const) {
          const got = yield* sfs.readRange(p, start, end)
          assert.deepStrictEqual(Array.from(got), Array.from(content.subarray(start, end)), `${start}..${end}`)
        }
        const short = yield* Effect.flip(sfs.readRange(p, 990, 1001))
        assert.strictEqual(short.code, "UNEXPECTED_EOF")
        const inverted = yield* Effect.flip(sfs.readRange(p, 5, 4))
        assert.strictEqual(inverted.code, "EINVAL")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("stream returns the exact bytes of every range across chunk boundaries", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const p = path.join(root, "events.jsonl")
        fs.writeFileSync(p, content)
        const cases: Array<{ start?: number; end?: number; chunkSize: number }> = [
          { chunkSize: 7 },
          { start: 3, chunkSize: 64 },
          { start: 3, end: 997, chunkSize: 10 },
          { end: 1000, chunkSize: 1000 },
          { start: 500, end: 500, chunkSize: 5 },
          { start: 1000, chunkSize: 5 }
        ]
        for (const options of cases) {
          const chunks = yield* Stream.runCollect(sfs.stream(p, options))
          const joined = Buffer.concat(chunks)
          const expected = content.subarray(options.start ?? 0, options.end ?? content.length)
          assert.deepStrictEqual(Array.from(joined), Array.from(expected), JSON.stringify(options))
          assert.isTrue(chunks.every((c) => c.length > 0 && c.length <= options.chunkSize))
        }
        const short = yield* Effect.flip(Stream.runDrain(sfs.stream(p, { end: 1001, chunkSize: 300 })))
        assert.strictEqual(short.code, "UNEXPECTED_EOF")
        fs.symlinkSync(p, path.join(root, "link"))
        const link = yield* Effect.flip(Stream.runDrain(sfs.stream(path.join(root, "link"))))
        assert.strictEqual(link.code, "ELOOP")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("stream reads a 20 MB file in bounded chunks", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const p = path.join(root, "big.jsonl")
        const block = Buffer.alloc(1024 * 1024)
        for (let i = 0; i < block.length; i++) block[i] = (i * 31) % 256
        const expected = createHash("sha256")
        const fd = fs.openSync(p, "w")
        for (let i = 0; i < 20; i++) {
          block[0] = i
          fs.writeSync(fd, block)
          expected.update(block)
        }
        fs.closeSync(fd)
        const summary = yield* Stream.runFold(
          sfs.stream(p),
          () => ({ hash: createHash("sha256"), chunks: 0, largest: 0, total: 0 }),
          (acc, chunk) => {
            acc.hash.update(chunk)
            return {
              ...acc,
              chunks: acc.chunks + 1,
              largest: Math.max(acc.largest, chunk.length),
              total: acc.total + chunk.length
            }
          }
        )
        assert.strictEqual(summary.total, 20 * 1024 * 1024)
        assert.isAtMost(summary.largest, 1024 * 1024)
        assert.isAtLeast(summary.chunks, 20)
        assert.strictEqual(summary.hash.digest("hex"), expected.digest("hex"))
      }).pipe(Effect.provide(SessionFs.layerNode)))
  })

  describe("removal", () => {
    it.effect("removeTree removes the tree but not what links inside it point to", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const outside = path.join(root, "outside")
        fs.mkdirSync(outside)
        fs.writeFileSync(path.join(outside, "precious"), "keep")
        const tree = path.join(root, "sessions", "s1")
        fs.mkdirSync(path.join(tree, "derived"), { recursive: true })
        fs.writeFileSync(path.join(tree, "events.jsonl"), "x\n")
        fs.symlinkSync(outside, path.join(tree, "derived", "dirlink"))
        fs.symlinkSync(path.join(outside, "precious"), path.join(tree, "filelink"))
        yield* sfs.removeTree(tree)
        assert.isFalse(fs.existsSync(tree))
        assert.strictEqual(fs.readFileSync(path.join(outside, "precious"), "utf8"), "keep")
        assert.deepStrictEqual(fs.readdirSync(outside), ["precious"])
        yield* sfs.removeTree(tree)
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("removeTree on a symlinked directory removes only the link", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        fs.mkdirSync(path.join(root, "real"))
        fs.writeFileSync(path.join(root, "real", "f"), "keep")
        fs.symlinkSync(path.join(root, "real"), path.join(root, "link"))
        yield* sfs.removeTree(path.join(root, "link"))
        assert.isFalse(fs.existsSync(path.join(root, "link")))
        assert.strictEqual(fs.readFileSync(path.join(root, "real", "f"), "utf8"), "keep")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("removeFile unlinks a link but not its target, reports a missing file and refuses a directory", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        fs.writeFileSync(path.join(root, "target"), "keep")
        fs.symlinkSync(path.join(root, "target"), path.join(root, "link"))
        assert.isTrue(yield* sfs.removeFile(path.join(root, "link")))
        assert.isFalse(fs.existsSync(path.join(root, "link")))
        assert.strictEqual(fs.readFileSync(path.join(root, "target"), "utf8"), "keep")
        assert.isFalse(yield* sfs.removeFile(path.join(root, "link")))
        const error = yield* Effect.flip(sfs.removeFile(root))
        assert.strictEqual(error.code, "EISDIR")
      }).pipe(Effect.provide(SessionFs.layerNode)))

    it.effect("rename moves a file and realPath resolves links", () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        fs.writeFileSync(path.join(root, "a"), "x")
        yield* sfs.rename(path.join(root, "a"), path.join(root, "b"))
        assert.deepStrictEqual(fs.readdirSync(root), ["b"])
        fs.symlinkSync(path.join(root, "b"), path.join(root, "c"))
        assert.strictEqual(yield* sfs.realPath(path.join(root, "c")), path.join(root, "b"))
      }).pipe(Effect.provide(SessionFs.layerNode)))
  })
})
