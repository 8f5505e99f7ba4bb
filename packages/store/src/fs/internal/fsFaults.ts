/**
 * Fault injection for `SessionFs.layerFaulty`: a `Sys` wrapper that counts every system call,
 * fails planned ones (ENOSPC/EIO/EACCES), tears writes after K bytes, and remembers how much of
 * every written file was last synced so a simulated crash can drop exactly the unsynced bytes.
 * Because composite operations are built from these calls, every step of them — each step of an
 * atomic write, each component of a directory walk — is an injection point.
 */
import { Effect, Result } from "effect"
import type { Fault, FaultControllerApi, FsOp } from "../SessionFs.ts"
import { FsRefusal } from "./fsErrors.ts"
import { withFd } from "./fsPath.ts"
import type { Sys } from "./fsSys.ts"
import { Flags, isWriteOpen } from "./fsSys.ts"

interface FaultState {
  total: number
  readonly byOp: Map<FsOp, number>
  readonly trace: Array<FsOp>
  faults: Array<{ readonly fault: Fault; spent: boolean }>
  injected: number
  crashed: boolean
  /** Descriptor → path of every file opened for writing. */
  readonly writers: Map<number, string>
  /** Path → length known durable (at its last fsync/fdatasync, or when first opened for writing). */
  readonly synced: Map<string, number>
}

const injectedError = (code: string, op: FsOp, target: string): FsRefusal =>
  new FsRefusal(code, `${code}: injected fault, ${op} '${target}'`)

/** Ops a crashed process still performs: the kernel closes descriptors and drops locks on death. */
const survivesCrash = (op: FsOp): boolean => op === "close" || op === "unlock"

/** Wraps `inner` with counting and faults; returns the wrapped calls and their controller. */
export const makeFaulty = (
  inner: Sys,
  initial: ReadonlyArray<Fault>
): { readonly sys: Sys; readonly controller: FaultControllerApi } => {
  const state: FaultState = {
    total: 0,
    byOp: new Map(),
    trace: [],
    faults: initial.map((fault) => ({ fault, spent: false })),
    injected: 0,
    crashed: false,
    writers: new Map(),
    synced: new Map()
  }

  /**
   * Counts one call and decides its fate: `undefined` = run normally, a tear = write that many
   * bytes and then fail with its code; any other fault throws here.
   */
  const admit = (op: FsOp, target: string): { readonly keepBytes: number; readonly code: string } | undefined => {
    if (state.crashed && !survivesCrash(op)) {
      throw injectedError("EIO", op, target)
    }
    const global = state.total++
    const perOp = state.byOp.get(op) ?? 0
    state.byOp.set(op, perOp + 1)
    state.trace.push(op)
    for (const entry of state.faults) {
      if (entry.spent) {
        continue
      }
      const fault = entry.fault
      if (fault._tag === "TearWrite") {
        if (op === "write" && perOp === fault.call) {
          entry.spent = true
          state.injected++
          return fault
        }
        continue
      }
      if (fault.op !== undefined && fault.op !== op) {
        continue
      }
      const index = fault.op === undefined ? global : perOp
      if (index === fault.call || (fault.persistent === true && index > fault.call)) {
        entry.spent = fault.persistent !== true
        state.injected++
        throw injectedError(fault.code, op, target)
      }
    }
    return undefined
  }

  /**
   * The real path of a file named through a held directory (`/proc/self/fd/<fd>/<name>`), so the
   * crash model never keys a file by a descriptor number that a later directory may reuse.
   * Uncounted: it is the model's bookkeeping, not a call of the code under test.
   */
  const canonical = (path: string): string => {
    const held = /^(\/proc\/self\/fd\/\d+)(\/.*)?$/.exec(path)
    if (held === null) return path
    const dir = Result.try(() => inner.realpath(held[1] ?? ""))
    return Result.isSuccess(dir) ? `${dir.success}${held[2] ?? ""}` : path
  }

  const markSynced = (fd: number): void => {
    const path = state.writers.get(fd)
    if (path !== undefined) {
      state.synced.set(path, inner.fstat(fd).size)
    }
  }

  const sys: Sys = {
    open: (path, flags, mode) => {
      admit("open", path)
      const fd = inner.open(path, flags, mode)
      if (isWriteOpen(flags)) {
        const real = canonical(path)
        state.writers.set(fd, real)
        if (!state.synced.has(real)) {
          state.synced.set(real, inner.fstat(fd).size)
        }
      }
      return fd
    },
    close: (fd) => {
      const path = state.writers.get(fd) ?? `fd ${fd}`
      state.writers.delete(fd)
      const admitted = Result.try(() => admit("close", path))
      // The descriptor is released even when close reports an error, as on Linux.
      inner.close(fd)
      if (Result.isFailure(admitted)) {
        throw admitted.failure
      }
    },
    read: (fd, buffer, offset, length, position) => {
      admit("read", state.writers.get(fd) ?? `fd ${fd}`)
      return inner.read(fd, buffer, offset, length, position)
    },
    write: (fd, buffer, offset, length) => {
      const path = state.writers.get(fd) ?? `fd ${fd}`
      const tear = admit("write", path)
      if (tear === undefined) {
        return inner.write(fd, buffer, offset, length)
      }
      const keep = Math.min(tear.keepBytes, length)
      let done = 0
      while (done < keep) {
        done += inner.write(fd, buffer, offset + done, keep - done)
      }
      throw injectedError(tear.code, "write", path)
    },
    fsync: (fd) => {
      admit("fsync", state.writers.get(fd) ?? `fd ${fd}`)
      inner.fsync(fd)
      markSynced(fd)
    },
    fdatasync: (fd) => {
      admit("fdatasync", state.writers.get(fd) ?? `fd ${fd}`)
      inner.fdatasync(fd)
      markSynced(fd)
    },
    fstat: (fd) => {
      admit("fstat", state.writers.get(fd) ?? `fd ${fd}`)
      return inner.fstat(fd)
    },
    ftruncate: (fd, length) => {
      const path = state.writers.get(fd)
      admit("ftruncate", path ?? `fd ${fd}`)
      inner.ftruncate(fd, length)
      if (path !== undefined) {
        state.synced.set(path, Math.min(state.synced.get(path) ?? length, length))
      }
    },
    fchmod: (fd, mode) => {
      admit("fchmod", state.writers.get(fd) ?? `fd ${fd}`)
      inner.fchmod(fd, mode)
    },
    lstat: (path) => {
      admit("lstat", path)
      return inner.lstat(path)
    },
    readdir: (path) => {
      admit("readdir", path)
      return inner.readdir(path)
    },
    readdirTypes: (path) => {
      admit("readdir", path)
      return inner.readdirTypes(path)
    },
    mkdir: (path, mode) => {
      admit("mkdir", path)
      inner.mkdir(path, mode)
    },
    rename: (fromPath, toPath) => {
      admit("rename", fromPath)
      const from = canonical(fromPath)
      const to = canonical(toPath)
      inner.rename(fromPath, toPath)
      const length = state.synced.get(from)
      state.synced.delete(from)
      if (length === undefined) {
        state.synced.delete(to)
      } else {
        state.synced.set(to, length)
      }
      for (const [fd, path] of state.writers) {
        if (path === from) {
          state.writers.set(fd, to)
        }
      }
    },
    unlink: (path) => {
      admit("unlink", path)
      inner.unlink(path)
      state.synced.delete(canonical(path))
    },
    rmdir: (path) => {
      admit("rmdir", path)
      inner.rmdir(path)
    },
    realpath: (path) => {
      admit("realpath", path)
      return inner.realpath(path)
    },
    access: (path, mode) => {
      admit("access", path)
      inner.access(path, mode)
    },
    tryLock: (fd) => {
      admit("lock", `fd ${fd}`)
      return inner.tryLock(fd)
    },
    unlock: (fd) => {
      admit("unlock", `fd ${fd}`)
      inner.unlock(fd)
    }
  }

  /** Truncates every tracked file to its synced length, bypassing the counters. */
  const dropUnsynced = (): void => {
    for (const [path, length] of state.synced) {
      const stats = inner.lstat(path)
      if (stats !== undefined && stats.isFile() && stats.size > length) {
        const fd = inner.open(path, Flags.readWriteNoFollow, 0)
        withFd(inner, fd, (d) => inner.ftruncate(d, length))
      }
    }
  }

  const controller: FaultControllerApi = {
    calls: Effect.sync(() => state.total),
    callsByOp: Effect.sync(() => new Map(state.byOp)),
    trace: Effect.sync(() => [...state.trace]),
    injected: Effect.sync(() => state.injected),
    arm: (fault) => Effect.sync(() => void state.faults.push({ fault, spent: false })),
    reset: Effect.sync(() => {
      state.total = 0
      state.byOp.clear()
      state.trace.length = 0
      state.faults = []
      state.injected = 0
      state.crashed = false
    }),
    crash: Effect.sync(() => {
      state.crashed = true
      dropUnsynced()
    })
  }

  return { sys, controller }
}
