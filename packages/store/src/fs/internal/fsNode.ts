/**
 * The `SessionFs` implementation over a `Sys` record of synchronous system calls (docs/format.md#permissions,
 * docs/format.md#session-lock, docs/log.md#liveness-lock). The Node layer passes the real calls, the fault layer a wrapped copy.
 *
 * Why synchronous calls: appends and durability barriers issue small writes followed by
 * `fdatasync`; `fs.writeSync`/`fs.fdatasyncSync` inside one `Effect.try` measured faster than the
 * libuv thread-pool round trips of the async API for that pattern, and a composite operation
 * (the atomic write's create → write → fsync → close → rename → fsync-dir) runs as one
 * uninterruptible step, so an interruption can never strand a half-finished sequence. Streaming
 * reads are chunked (`pread` of at most `chunkSize` bytes per pull), so memory stays bounded.
 */
import { Clock, Effect, Option, Result, Stream } from "effect"
import { basename, dirname, join } from "node:path"
import type { AppendFile, DirectoryHandle, LockProbe, LockResult, SessionFsApi, StreamOptions } from "../SessionFs.ts"
import type { StoreIoError } from "../StoreError.ts"
import {
  commitTemp,
  createIfAbsentSync,
  DIR_MODE,
  FILE_MODE,
  fileInfo,
  guardFd,
  prepareTempIn,
  requireRegular,
  walkedDir,
  writeAtomicIn,
  writeAtomicSync
} from "./fsAtomic.ts"
import type { WriteDir } from "./fsAtomic.ts"
import { errorCode, errorDetail, FsRefusal, ioRefusal, toCreateDirError, toIoError } from "./fsErrors.ts"
import { checkedAbsolute, chmodDirNoFollow, readFully, removeTreeSync, walkDir, withFd, writeAll } from "./fsPath.ts"
import type { Sys } from "./fsSys.ts"
import { Flags, WRITE_SEARCH } from "./fsSys.ts"

/** Default chunk of a streamed read: large enough to amortise syscalls, small enough to bound memory. */
export const DEFAULT_CHUNK_SIZE = 256 * 1024
const MAX_CHUNK_SIZE = 16 * 1024 * 1024
const readNoFollowSync = (sys: Sys, path: string): Option.Option<Uint8Array> => {
  if (!walkDir(sys, dirname(path), "validate")) {
    return Option.none()
  }
  const opened = Result.try(() => sys.open(path, Flags.readNoFollow, 0))
  if (Result.isFailure(opened)) {
    if (errorCode(opened.failure) === "ENOENT") {
      return Option.none()
    }
    throw opened.failure
  }
  return Option.some(withFd(sys, opened.success, (fd) => {
    const size = requireRegular(sys, fd)
    const first = Buffer.allocUnsafe(size)
    const count = readFully(sys, fd, first, 0)
    if (count < size) {
      return first.subarray(0, count)
    }
    // The file may have grown since fstat: read on to end of file.
    const rest: Array<Buffer> = []
    let position = size
    for (;;) {
      const more = Buffer.allocUnsafe(64 * 1024)
      const got = readFully(sys, fd, more, position)
      if (got === 0) {
        break
      }
      rest.push(more.subarray(0, got))
      position += got
    }
    return rest.length === 0 ? first : Buffer.concat([first, ...rest])
  }))
}

const makeAppendFile = (sys: Sys, path: string, fd: number): AppendFile => {
  let open = true
  const onFd = <A>(operation: string, use: (fd: number) => A): Effect.Effect<A, StoreIoError> =>
    Effect.try({
      try: () => {
        // A closed descriptor number may already belong to another file: never touch it.
        if (!open) {
          throw new FsRefusal("EBADF", "append file is closed")
        }
        return use(fd)
      },
      catch: toIoError(operation, path)
    })
  // Untraced: these run at every durability barrier, where a span per call cost more than the
  // Effect step itself (bench P2).
  return {
    path,
    write: (bytes: Uint8Array) => onFd("AppendFile.write", (d) => writeAll(sys, d, bytes)),
    datasync: onFd("AppendFile.datasync", (d) => sys.fdatasync(d)),
    size: onFd("AppendFile.size", (d) => sys.fstat(d).size),
    truncate: (length: number) => onFd("AppendFile.truncate", (d) => sys.ftruncate(d, length)),
    close: Effect.sync(() => {
      if (open) {
        open = false
        Result.try(() => sys.close(fd))
      }
    })
  }
}

const validRange = (start: number, end: number): boolean =>
  Number.isSafeInteger(start) && Number.isSafeInteger(end) && start >= 0 && end >= start

const rangeError = (operation: string, path: string, start: number, end: number): StoreIoError =>
  ioRefusal(operation, path, "EINVAL", `invalid byte range [${start}, ${end})`)

const shortRead = (expected: number, got: number, start: number): FsRefusal =>
  new FsRefusal("UNEXPECTED_EOF", `short read: expected ${expected} bytes at offset ${start}, got ${got}`)

const streamFrom = (
  sys: Sys,
  path: string,
  options: StreamOptions | undefined
): Stream.Stream<Uint8Array, StoreIoError> => {
  const operation = "stream"
  const start = options?.start ?? 0
  const end = options?.end
  const chunkSize = Math.min(Math.max(1, Math.floor(options?.chunkSize ?? DEFAULT_CHUNK_SIZE)), MAX_CHUNK_SIZE)
  if (!validRange(start, end ?? start)) {
    return Stream.fail(rangeError(operation, path, start, end ?? start))
  }
  const acquire = Effect.acquireRelease(
    Effect.try({
      try: () => {
        const fd = sys.open(checkedAbsolute(path), Flags.readNoFollow, 0)
        return guardFd(sys, fd, (d) => {
          requireRegular(sys, d)
          return d
        })
      },
      catch: toIoError(operation, path)
    }),
    (fd) => Effect.sync(() => Result.try(() => sys.close(fd)))
  )
  return Stream.unwrap(Effect.map(acquire, (fd) =>
    Stream.paginate(start, (position: number) =>
      Effect.try({
        try: (): readonly [ReadonlyArray<Uint8Array>, Option.Option<number>] => {
          const want = end === undefined ? chunkSize : Math.min(chunkSize, end - position)
          if (want <= 0) {
            return [[], Option.none()]
          }
          const buffer = Buffer.allocUnsafe(want)
          const got = readFully(sys, fd, buffer, position)
          if (end !== undefined && got < want) {
            throw shortRead(end - start, position + got - start, start)
          }
          if (got === 0) {
            return [[], Option.none()]
          }
          const next = position + got
          const more = end === undefined ? got === want : next < end
          return [[got === want ? buffer : buffer.subarray(0, got)], more ? Option.some(next) : Option.none()]
        },
        catch: toIoError(operation, path)
      })))).pipe(Stream.withSpan("SessionFs.stream"))
}

/** Chunks `forEachChunk` reads before it lets other fibers run. */
const CHUNKS_PER_STEP = 64

const forEachChunkFrom = (
  sys: Sys,
  path: string,
  chunkSize: number,
  onChunk: (chunk: Uint8Array) => void
): Effect.Effect<number, StoreIoError> => {
  const operation = "forEachChunk"
  const fail = toIoError(operation, path)
  const size = Math.min(Math.max(1, Math.floor(chunkSize)), MAX_CHUNK_SIZE)
  return Effect.acquireUseRelease(
    Effect.try({
      try: () => {
        const fd = sys.open(checkedAbsolute(path), Flags.readNoFollow, 0)
        return guardFd(sys, fd, (d) => {
          requireRegular(sys, d)
          return d
        })
      },
      catch: fail
    }),
    (fd) =>
      Effect.suspend(() => {
        const buffer = Buffer.allocUnsafe(size)
        let position = 0
        let done = false
        return Effect.whileLoop({
          while: () => !done,
          body: () =>
            Effect.try({
              try: () => {
                for (let i = 0; i < CHUNKS_PER_STEP && !done; i++) {
                  const got = readFully(sys, fd, buffer, position)
                  if (got > 0) onChunk(got === size ? buffer : buffer.subarray(0, got))
                  position += got
                  if (got < size) done = true
                }
              },
              catch: fail
            }),
          step: () => undefined
        }).pipe(Effect.map(() => position))
      }),
    (fd) => Effect.sync(() => Result.try(() => sys.close(fd)))
  ).pipe(Effect.withSpan("SessionFs.forEachChunk"))
}

const lockUnavailable = (cause: unknown): LockResult => ({ _tag: "Unavailable", reason: errorDetail(cause) })

const tryLockSync = (sys: Sys, path: string): LockResult => {
  const opened = Result.try(() => {
    const absolute = checkedAbsolute(path)
    createIfAbsentSync(sys, absolute)
    return sys.open(absolute, Flags.readWriteNoFollow, 0)
  })
  if (Result.isFailure(opened)) {
    return lockUnavailable(opened.failure)
  }
  const fd = opened.success
  const locked = Result.try(() => sys.tryLock(fd))
  if (Result.isFailure(locked) || !locked.success) {
    Result.try(() => sys.close(fd))
    return Result.isFailure(locked) ? lockUnavailable(locked.failure) : { _tag: "HeldElsewhere" }
  }
  let held = true
  return {
    _tag: "Acquired",
    // Idempotent: closing twice could close a descriptor number reused by another file.
    release: Effect.sync(() => {
      if (held) {
        held = false
        Result.try(() => sys.unlock(fd))
        Result.try(() => sys.close(fd))
      }
    })
  }
}

const probeLockSync = (sys: Sys, path: string): LockProbe => {
  const opened = Result.try(() => sys.open(checkedAbsolute(path), Flags.readWriteNoFollow, 0))
  if (Result.isFailure(opened)) {
    if (errorCode(opened.failure) === "ENOENT") return "absent"
    const stats = Result.try(() => sys.lstat(checkedAbsolute(path)))
    return Result.isSuccess(stats) && stats.success?.isSymbolicLink() === true ? "link" : "held"
  }
  const fd = opened.success
  const locked = Result.try(() => sys.tryLock(fd))
  if (Result.isSuccess(locked) && locked.success) {
    Result.try(() => sys.unlock(fd))
  }
  Result.try(() => sys.close(fd))
  return Result.isSuccess(locked) && !locked.success ? "held" : "free"
}

/**
 * `writeAtomic` with the content pulled from `chunks`, in the directory `place()` gives (called once,
 * inside the step that creates the temp file). Uninterruptible except while pulling chunks, so the
 * temp file is always either committed or removed; `onError` also runs on interruption of the pull.
 */
const atomicStream = <E>(
  sys: Sys,
  pid: number,
  place: () => WriteDir,
  base: string,
  chunks: Stream.Stream<Uint8Array, E>,
  fail: (cause: unknown) => StoreIoError
): Effect.Effect<void, StoreIoError | E> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const nanos = yield* Clock.currentTimeNanos
      const [temp, dir] = yield* Effect.try({
        try: () => {
          const dir = place()
          return [prepareTempIn(sys, pid, dir, base, nanos), dir] as const
        },
        catch: fail
      })
      yield* restore(
        Stream.runForEach(chunks, (chunk) => Effect.try({ try: () => writeAll(sys, temp.fd, chunk), catch: fail }))
      ).pipe(
        Effect.onError(() =>
          Effect.sync(() => {
            Result.try(() => sys.close(temp.fd))
            Result.try(() => sys.unlink(temp.path))
          })
        )
      )
      yield* Effect.try({ try: () => commitTemp(sys, temp, dir, base), catch: fail })
    })
  )

/** A plain file name: no separator, not empty, not `.` or `..`. */
const checkedName = (name: string): string => {
  if (name.length === 0 || name === "." || name === ".." || /[\\/]/.test(name)) {
    throw new FsRefusal("EINVAL", `not a plain file name: '${name}'`)
  }
  return name
}

/**
 * The `/proc/self/fd/<fd>` name of a directory descriptor when the kernel resolves it to that very
 * directory (Linux with `/proc` mounted): same device and inode through the link as through the
 * descriptor. Undefined elsewhere, and when the probe fails for any reason.
 */
const procDirOf = (sys: Sys, fd: number): string | undefined => {
  if (process.platform !== "linux") return undefined
  const proc = `/proc/self/fd/${fd}`
  const probed = Result.try(() => {
    const held = sys.fstat(fd)
    const through = sys.lstat(`${proc}/.`)
    return through !== undefined && through.isDirectory() && through.dev === held.dev && through.ino === held.ino
  })
  return Result.isSuccess(probed) && probed.success ? proc : undefined
}

/**
 * docs/format.md#permissions held directory: ancestors validated by the walk, the final component
 * opened `O_DIRECTORY|O_NOFOLLOW` and kept. Its atomic writes name children through
 * `/proc/self/fd/<fd>/` (the kernel resolves that to the held directory itself, like `openat`), so
 * no component of the path is looked up again and none can be swapped for a link; the rename is
 * made durable by an fsync of the held descriptor. Without a usable `/proc` every write walks the
 * path first, as `writeAtomic` does.
 */
const openDirectorySync = (sys: Sys, pid: number, path: string): DirectoryHandle => {
  if (!walkDir(sys, path, "validate")) {
    throw new FsRefusal("ENOENT", "no such directory")
  }
  const fd = sys.open(path, Flags.readDirNoFollow, 0)
  const proc = guardFd(sys, fd, (d) => procDirOf(sys, d))
  let open = true
  // A closed descriptor number may already belong to another directory: never name it again.
  const place = (): WriteDir => {
    if (!open) throw new FsRefusal("EBADF", "directory handle is closed")
    return proc === undefined
      ? walkedDir(sys, path)
      : { dir: proc, syncDir: () => sys.fsync(fd) }
  }
  return {
    path,
    // Untraced, one step: the barrier runs this twice per turn (bench P2).
    writeAtomic: (name, data) =>
      Effect.clockWith((clock) =>
        Effect.try({
          try: () => {
            const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data
            writeAtomicIn(sys, pid, place(), checkedName(name), bytes, clock.currentTimeNanosUnsafe())
          },
          catch: (cause) => toIoError("writeAtomic", join(path, name))(cause)
        })
      ),
    writeAtomicStream: (name, chunks) =>
      Effect.suspend(() => {
        const fail = toIoError("writeAtomicStream", join(path, name))
        return Effect.flatMap(
          Effect.try({ try: () => checkedName(name), catch: fail }),
          (base) => atomicStream(sys, pid, place, base, chunks, fail)
        )
      }),
    close: Effect.sync(() => {
      if (open) {
        open = false
        Result.try(() => sys.close(fd))
      }
    })
  }
}

/**
 * The sessions root's ensure (`SessionFsApi.ensureSessionsRoot`): a root the walk creates is forced
 * `0700`; an existing one keeps its mode and must let this process create entries in it.
 */
const ensureSessionsRootSync = (sys: Sys, root: string): void => {
  const existing = sys.lstat(root)
  walkDir(sys, root, "ensure")
  if (existing === undefined) {
    chmodDirNoFollow(sys, root, DIR_MODE)
    return
  }
  const usable = Result.try(() => sys.access(root, WRITE_SEARCH))
  if (Result.isFailure(usable)) {
    const mode = (existing.mode & 0o7777).toString(8).padStart(4, "0")
    throw new FsRefusal(
      errorCode(usable.failure),
      `the sessions root ${root} is not usable: this process cannot create entries in it (mode ${mode}, ` +
        `owner uid ${existing.uid}: ${errorDetail(usable.failure)}); the store leaves an existing root's mode ` +
        "alone, so change it or choose another sessions root"
    )
  }
}

/** Builds the `SessionFs` service over `sys`; `pid` names atomic-write temporaries. */
export const makeSessionFs = (sys: Sys, pid: number): SessionFsApi => {
  // The directory a listing reads: absolute, existing, not a symbolic link (never followed).
  const listable = (path: string): string => {
    const absolute = checkedAbsolute(path)
    const stats = sys.lstat(absolute)
    if (stats === undefined) {
      throw new FsRefusal("ENOENT", "no such directory")
    }
    if (stats.isSymbolicLink()) {
      throw new FsRefusal("ELOOP", "refusing to list a symlinked directory")
    }
    return absolute
  }

  const io = <A>(operation: string, path: string, run: () => A): Effect.Effect<A, StoreIoError> =>
    Effect.try({ try: run, catch: toIoError(operation, path) })

  return {
    pid,

    ensurePrivateDir: Effect.fn("SessionFs.ensurePrivateDir")((path: string) =>
      Effect.try({
        try: () => {
          walkDir(sys, path, "ensure")
          chmodDirNoFollow(sys, checkedAbsolute(path), DIR_MODE)
        },
        catch: toCreateDirError("ensurePrivateDir", path)
      })
    ),

    ensureSessionsRoot: Effect.fn("SessionFs.ensureSessionsRoot")((path: string) =>
      Effect.try({
        try: () => ensureSessionsRootSync(sys, checkedAbsolute(path)),
        catch: toCreateDirError("ensureSessionsRoot", path)
      })
    ),

    openAppend: Effect.fn("SessionFs.openAppend")((path: string) =>
      io("openAppend", path, () => {
        const fd = sys.open(checkedAbsolute(path), Flags.appendCreateNoFollow, FILE_MODE)
        return guardFd(sys, fd, (d) => {
          requireRegular(sys, d)
          sys.fchmod(d, FILE_MODE)
          return makeAppendFile(sys, path, d)
        })
      })
    ),

    readRange: Effect.fn("SessionFs.readRange")((path: string, start: number, end: number) =>
      validRange(start, end) ?
        io("readRange", path, () => {
          const fd = sys.open(checkedAbsolute(path), Flags.readNoFollow, 0)
          return withFd(sys, fd, (d) => {
            requireRegular(sys, d)
            const buffer = Buffer.allocUnsafe(end - start)
            const got = readFully(sys, d, buffer, start)
            if (got < buffer.length) {
              throw shortRead(buffer.length, got, start)
            }
            return buffer
          })
        }) :
        Effect.fail(rangeError("readRange", path, start, end))
    ),

    stream: (path, options) => streamFrom(sys, path, options),

    forEachChunk: (path, chunkSize, onChunk) => forEachChunkFrom(sys, path, chunkSize, onChunk),

    readFileNoFollow: Effect.fn("SessionFs.readFileNoFollow")((path: string) =>
      io("readFileNoFollow", path, () => readNoFollowSync(sys, checkedAbsolute(path)))
    ),

    writeAtomic: Effect.fn("SessionFs.writeAtomic")(function*(path: string, data: Uint8Array | string) {
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data
      const nanos = yield* Clock.currentTimeNanos
      yield* io("writeAtomic", path, () => writeAtomicSync(sys, pid, checkedAbsolute(path), bytes, nanos))
    }),

    writeAtomicStream: Effect.fn("SessionFs.writeAtomicStream")(
      function*<E>(path: string, chunks: Stream.Stream<Uint8Array, E>) {
        const absolute = yield* io("writeAtomicStream", path, () => checkedAbsolute(path))
        yield* atomicStream(
          sys,
          pid,
          () => walkedDir(sys, dirname(absolute)),
          basename(absolute),
          chunks,
          toIoError("writeAtomicStream", path)
        )
      }
    ),

    openDirectory: Effect.fn("SessionFs.openDirectory")((path: string) =>
      io("openDirectory", path, () => openDirectorySync(sys, pid, checkedAbsolute(path)))
    ),

    lstat: Effect.fn("SessionFs.lstat")((path: string) =>
      io("lstat", path, () => {
        const stats = sys.lstat(checkedAbsolute(path))
        return stats === undefined ? Option.none() : Option.some(fileInfo(stats))
      })
    ),

    // One effect for many lstats: a per-call effect costs more than the system call here.
    lstatMany: Effect.fn("SessionFs.lstatMany")((paths: ReadonlyArray<string>) =>
      io("lstat", paths[0] ?? "", () =>
        paths.map((path) => {
          const stats = sys.lstat(checkedAbsolute(path))
          return stats === undefined ? undefined : fileInfo(stats)
        }))
    ),

    listDir: Effect.fn("SessionFs.listDir")((path: string) =>
      io("listDir", path, () => sys.readdir(listable(path)).sort())
    ),

    listDirTypes: Effect.fn("SessionFs.listDirTypes")((path: string) =>
      io("listDir", path, () => {
        const absolute = listable(path)
        const entries = sys.readdirTypes(absolute).map(({ name, type }) => {
          if (type !== undefined) return { name, type }
          const child = sys.lstat(`${absolute}${absolute.endsWith("/") ? "" : "/"}${name}`)
          return { name, type: child === undefined ? undefined : fileInfo(child).type }
        })
        return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      })
    ),

    rename: Effect.fn("SessionFs.rename")((from: string, to: string) =>
      io("rename", from, () => sys.rename(checkedAbsolute(from), checkedAbsolute(to)))
    ),

    removeFile: Effect.fn("SessionFs.removeFile")((path: string) =>
      io("removeFile", path, () => {
        const absolute = checkedAbsolute(path)
        const stats = sys.lstat(absolute)
        if (stats === undefined) {
          return false
        }
        if (stats.isDirectory()) {
          throw new FsRefusal("EISDIR", "is a directory")
        }
        const removed = Result.try(() => sys.unlink(absolute))
        if (Result.isFailure(removed)) {
          if (errorCode(removed.failure) === "ENOENT") {
            return false
          }
          throw removed.failure
        }
        return true
      })
    ),

    removeTree: Effect.fn("SessionFs.removeTree")((path: string) =>
      io("removeTree", path, () => removeTreeSync(sys, checkedAbsolute(path)))
    ),

    createFileIfAbsent: Effect.fn("SessionFs.createFileIfAbsent")((path: string) =>
      io("createFileIfAbsent", path, () => createIfAbsentSync(sys, checkedAbsolute(path)))
    ),

    tryLock: Effect.fn("SessionFs.tryLock")((path: string) => Effect.sync(() => tryLockSync(sys, path))),

    probeLock: Effect.fn("SessionFs.probeLock")((path: string) => Effect.sync(() => probeLockSync(sys, path))),

    realPath: Effect.fn("SessionFs.realPath")((path: string) =>
      io("realPath", path, () => sys.realpath(checkedAbsolute(path)))
    )
  }
}
