/**
 * The fault-injecting SessionFs layer: counted calls, Nth-call failures, torn writes and crash
 * simulation, and what they prove about the atomic write and the lock degrading safely.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir as makeTempDir } from "@logbook/testkit"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { FaultController, SessionFs } from "../../src/fs/SessionFs.ts"
import type { FaultCode } from "../../src/fs/SessionFs.ts"

const tempDir = makeTempDir("faults")

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)
const tempFiles = (dir: string): Array<string> => fs.readdirSync(dir).filter((n) => n.endsWith(".tmp"))

describe("SessionFs.layerFaulty", () => {
  it.effect("counts every call per operation and in order", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const ctl = yield* FaultController
      const file = yield* sfs.openAppend(path.join(root, "events.jsonl"))
      yield* file.write(bytes("x\n"))
      yield* file.datasync
      yield* file.size
      const byOp = yield* ctl.callsByOp
      const trace = yield* ctl.trace
      // The fault layer's own bookkeeping (sizes at open and at sync) is not counted.
      assert.deepStrictEqual(trace, ["open", "fstat", "fchmod", "write", "fdatasync", "fstat"])
      assert.strictEqual(yield* ctl.calls, trace.length)
      assert.strictEqual(byOp.get("fstat"), 2)
      yield* ctl.reset
      assert.strictEqual(yield* ctl.calls, 0)
      yield* file.close
    }).pipe(Effect.provide(SessionFs.layerFaulty())))

  for (const code of ["ENOSPC", "EIO", "EACCES"] satisfies Array<FaultCode>) {
    it.effect(`an injected ${code} surfaces as a StoreIoError naming the failing operation`, () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sfs = yield* SessionFs
        const file = yield* sfs.openAppend(path.join(root, "events.jsonl"))
        yield* file.write(bytes("x\n"))
        const error = yield* Effect.flip(file.datasync)
        assert.strictEqual(error._tag, "StoreIoError")
        assert.strictEqual(error.code, code)
        assert.strictEqual(error.operation, "AppendFile.datasync")
        assert.strictEqual(error.path, path.join(root, "events.jsonl"))
        yield* file.close
      }).pipe(Effect.provide(SessionFs.layerFaulty([{ _tag: "Fail", op: "fdatasync", call: 0, code }]))))
  }

  it.effect("the Nth call overall fails once and later calls succeed", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const ctl = yield* FaultController
      const file = yield* sfs.openAppend(path.join(root, "events.jsonl"))
      // Calls 0-2 were the open; call 3 is the first write.
      const error = yield* Effect.flip(file.write(bytes("lost\n")))
      assert.strictEqual(error.code, "EIO")
      yield* file.write(bytes("kept\n"))
      assert.strictEqual(fs.readFileSync(path.join(root, "events.jsonl"), "utf8"), "kept\n")
      assert.strictEqual(yield* ctl.injected, 1)
      yield* file.close
    }).pipe(Effect.provide(SessionFs.layerFaulty([{ _tag: "Fail", call: 3, code: "EIO" }]))))

  it.effect("a persistent fault fails every later matching call until reset", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const ctl = yield* FaultController
      const p = path.join(root, "events.jsonl")
      const file = yield* sfs.openAppend(p)
      yield* ctl.arm({ _tag: "Fail", op: "write", call: 1, code: "ENOSPC", persistent: true })
      yield* file.write(bytes("a\n"))
      assert.strictEqual((yield* Effect.flip(file.write(bytes("b\n")))).code, "ENOSPC")
      assert.strictEqual((yield* Effect.flip(file.write(bytes("c\n")))).code, "ENOSPC")
      yield* ctl.reset
      yield* file.write(bytes("d\n"))
      assert.strictEqual(fs.readFileSync(p, "utf8"), "a\nd\n")
      yield* file.close
    }).pipe(Effect.provide(SessionFs.layerFaulty())))

  it.effect("a torn write leaves exactly K bytes of that write on disk", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const p = path.join(root, "events.jsonl")
      const file = yield* sfs.openAppend(p)
      yield* file.write(bytes("whole\n"))
      const error = yield* Effect.flip(file.write(bytes("abcdefgh\n")))
      assert.strictEqual(error.code, "ENOSPC")
      assert.strictEqual(fs.readFileSync(p, "utf8"), "whole\nabc")
      assert.strictEqual(yield* file.size, 9)
      yield* file.close
    }).pipe(Effect.provide(SessionFs.layerFaulty([{ _tag: "TearWrite", call: 1, keepBytes: 3, code: "ENOSPC" }]))))

  it.effect("a crash drops bytes written but not synced and keeps synced ones", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const ctl = yield* FaultController
      const events = path.join(root, "events.jsonl")
      const manifest = path.join(root, "manifest.json")
      fs.writeFileSync(events, "before\n")
      const file = yield* sfs.openAppend(events)
      yield* file.write(bytes("synced\n"))
      yield* file.datasync
      yield* file.write(bytes("unsynced\n"))
      yield* sfs.writeAtomic(manifest, "{\"v\":1}")
      yield* sfs.writeAtomic(manifest, "{\"v\":2}")
      assert.strictEqual(fs.readFileSync(events, "utf8"), "before\nsynced\nunsynced\n")
      yield* ctl.crash
      assert.strictEqual(fs.readFileSync(events, "utf8"), "before\nsynced\n")
      assert.strictEqual(fs.readFileSync(manifest, "utf8"), "{\"v\":2}")
      // The dead process writes nothing more, but its descriptors still close.
      assert.strictEqual((yield* Effect.flip(file.write(bytes("ghost\n")))).code, "EIO")
      yield* file.close
      assert.strictEqual(fs.readFileSync(events, "utf8"), "before\nsynced\n")
      yield* ctl.reset
      const reopened = yield* sfs.openAppend(events)
      yield* reopened.write(bytes("after\n"))
      yield* reopened.close
      assert.strictEqual(fs.readFileSync(events, "utf8"), "before\nsynced\nafter\n")
    }).pipe(Effect.provide(SessionFs.layerFaulty())))

  it.effect("writeAtomic keeps the old content and leaves no temp file whichever single call fails", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const ctl = yield* FaultController
      const dir = path.join(root, "index")
      const p = path.join(dir, "turns.json")
      yield* sfs.writeAtomic(p, "old")
      yield* ctl.reset
      yield* sfs.writeAtomic(p, "old")
      const total = yield* ctl.calls
      const trace = yield* ctl.trace
      const renameAt = trace.indexOf("rename")
      assert.isAbove(renameAt, 0)
      for (let call = 0; call < total; call++) {
        yield* ctl.reset
        yield* ctl.arm({ _tag: "Fail", call, code: "EIO" })
        const exit = yield* Effect.exit(sfs.writeAtomic(p, "new"))
        assert.strictEqual(yield* ctl.injected, 1, `call ${call} (${trace[call]}) was not reached`)
        const content = fs.readFileSync(p, "utf8")
        if (call <= renameAt) {
          assert.isTrue(Exit.isFailure(exit), `failing call ${call} (${trace[call]}) must fail the write`)
          assert.strictEqual(content, "old", `call ${call} (${trace[call]})`)
        } else {
          // After the rename only the directory fsync remains: the new content is in place.
          assert.strictEqual(content, "new", `call ${call} (${trace[call]})`)
        }
        if (Exit.isFailure(exit)) {
          const error = yield* Effect.flip(exit)
          assert.strictEqual(error.code, "EIO")
        }
        assert.deepStrictEqual(tempFiles(dir), [], `call ${call} (${trace[call]}) left a temp file`)
        assert.strictEqual(fs.statSync(p).mode & 0o777, 0o600)
        fs.writeFileSync(p, "old")
      }
    }).pipe(Effect.provide(SessionFs.layerFaulty())))

  it.effect("ensurePrivateDir reports a CreateDirError whichever single call fails", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const ctl = yield* FaultController
      yield* ctl.reset
      yield* sfs.ensurePrivateDir(path.join(root, "probe", "sessions"))
      const total = yield* ctl.calls
      for (let call = 0; call < total; call++) {
        const target = path.join(root, `s${call}`, "sessions")
        yield* ctl.reset
        yield* ctl.arm({ _tag: "Fail", call, code: "EACCES" })
        const exit = yield* Effect.exit(sfs.ensurePrivateDir(target))
        const trace = yield* ctl.trace
        if (trace[call] === "close") {
          // Closing the chmod descriptor carries no durability meaning; its error is ignored.
          assert.isTrue(Exit.isSuccess(exit))
        } else {
          const error = yield* Effect.flip(exit)
          assert.strictEqual(error._tag, "CreateDirError")
          assert.strictEqual(error.code, "EACCES")
        }
      }
    }).pipe(Effect.provide(SessionFs.layerFaulty())))

  it.effect("a failing lock call degrades tryLock to Unavailable and a failing open makes probeLock fail safe", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sfs = yield* SessionFs
      const ctl = yield* FaultController
      const lockPath = path.join(root, "session.lock")
      yield* ctl.arm({ _tag: "Fail", op: "lock", call: 0, code: "EIO" })
      const result = yield* sfs.tryLock(lockPath)
      assert.strictEqual(result._tag, "Unavailable")
      yield* ctl.reset
      yield* ctl.arm({ _tag: "Fail", op: "open", call: 0, code: "EACCES" })
      assert.strictEqual(yield* sfs.probeLock(lockPath), "held")
      yield* ctl.reset
      yield* ctl.arm({ _tag: "Fail", op: "lock", call: 0, code: "EIO" })
      assert.strictEqual(yield* sfs.probeLock(lockPath), "free")
    }).pipe(Effect.provide(SessionFs.layerFaulty())))
})
