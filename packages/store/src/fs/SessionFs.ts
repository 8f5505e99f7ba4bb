/**
 * The file-system seam of the store: the only module (with its `internal/fs*` helpers) that
 * touches `node:fs`. Its interface is deliberately narrow — exactly the primitives of docs/format.md#permissions
 * (symlink-safe directory ensure, no-follow opens, append, atomic private write, tree removal
 * that never follows links) and docs/format.md#session-lock, docs/log.md#liveness-lock (the liveness lock) — so that every crash window
 * of EventLog and Retention can be reached through the fault-injecting layer without root.
 *
 * Paths may be absolute or relative (resolved against the working directory); any `..`
 * component is refused everywhere.
 */
import { Context, Effect, Layer } from "effect"
import type { Option, Stream } from "effect"
import { makeFaulty } from "./internal/fsFaults.ts"
import { makeSessionFs } from "./internal/fsNode.ts"
import type { SysOp } from "./internal/fsSys.ts"
import { nodeSys } from "./internal/fsSys.ts"
import type { CreateDirError, StoreIoError } from "./StoreError.ts"

/**
 * A file opened for appending (`O_APPEND|O_NOFOLLOW`, `0600`). Not scoped: the owner closes it,
 * and EventLog closes and reopens it around a cap rewrite. Every operation after `close` fails
 * with `EBADF` without touching the descriptor number (which may already belong to another file).
 *
 * **Gotchas**: `write` may leave a prefix of `bytes` on disk when it fails (ENOSPC mid-way);
 * the caller truncates back to the size it knew. Bytes are durable only after `datasync`.
 */
export interface AppendFile {
  readonly path: string
  readonly write: (bytes: Uint8Array) => Effect.Effect<void, StoreIoError>
  readonly datasync: Effect.Effect<void, StoreIoError>
  readonly size: Effect.Effect<number, StoreIoError>
  readonly truncate: (length: number) => Effect.Effect<void, StoreIoError>
  readonly close: Effect.Effect<void>
}

/**
 * A directory opened once and kept (`O_DIRECTORY|O_NOFOLLOW`, ancestors validated by the walk when
 * opened), for repeated atomic writes of its direct children — the session directory and its
 * `index/` during a session's lifetime. Not scoped: the owner closes it. On Linux the writes name
 * the children through `/proc/self/fd/<fd>/<name>`, which the kernel resolves to the held directory
 * itself (as `openat` would), so no component is walked again and none can be swapped for a link,
 * and the rename is made durable by an fsync of the held descriptor; elsewhere (no usable `/proc`)
 * each write walks the path as `SessionFsApi.writeAtomic` does.
 *
 * **Gotchas**: a directory moved away after the open keeps receiving the writes (they never follow
 * whatever now sits at the old path). Every operation after `close` fails `EBADF`.
 */
export interface DirectoryHandle {
  readonly path: string
  /** `SessionFsApi.writeAtomic` of the direct child `name` (a plain file name). */
  readonly writeAtomic: (name: string, data: Uint8Array | string) => Effect.Effect<void, StoreIoError>
  /** `SessionFsApi.writeAtomicStream` of the direct child `name` (a plain file name). */
  readonly writeAtomicStream: <E>(
    name: string,
    chunks: Stream.Stream<Uint8Array, E>
  ) => Effect.Effect<void, StoreIoError | E>
  readonly close: Effect.Effect<void>
}

/** What `lstat` reports about a path, without following a final symlink. */
export interface FileInfo {
  readonly type: "File" | "Directory" | "SymbolicLink" | "Other"
  readonly size: number
  readonly mtimeMs: number
}

/**
 * Outcome of trying the liveness lock: `Acquired` (keep `release` until the session's shared
 * state is dropped; it is idempotent), `HeldElsewhere` (another open file description — another
 * process or another handle in this one — holds it), or `Unavailable` (the lock file could not be
 * created or opened, or locking is unsupported); callers continue unlocked in both latter cases.
 */
export type LockResult =
  | { readonly _tag: "Acquired"; readonly release: Effect.Effect<void> }
  | { readonly _tag: "HeldElsewhere" }
  | { readonly _tag: "Unavailable"; readonly reason: string }

/**
 * Outcome of probing a lock without taking it (docs/log.md#liveness-lock): the file is absent, held,
 * or free — or `link`: a symbolic link sits at the lock's name, which is never opened, so it is no
 * lock at all and whether a process has the session open cannot be told.
 */
export type LockProbe = "absent" | "held" | "free" | "link"

/** Options of `SessionFs.stream`: byte range `[start, end)` (default whole file) and chunk size. */
export interface StreamOptions {
  readonly start?: number
  readonly end?: number
  readonly chunkSize?: number
}

/** The operations of `SessionFs`. */
export interface SessionFsApi {
  /**
   * docs/format.md#permissions safe directory ensure: refuses `..`, a symlinked final component, a symlinked ancestor
   * resolving outside its canonical parent, and existing non-directories; creates missing
   * components `0700`; always forces `0700` on the final directory.
   */
  readonly ensurePrivateDir: (path: string) => Effect.Effect<void, CreateDirError>
  /**
   * The sessions root's ensure: the safe walk of `ensurePrivateDir`, but only a root the walk creates
   * is made `0700`; an existing root is the user's and keeps its mode (a shared `1777` directory
   * stays shared). An existing root this process cannot create entries in (no write or search
   * permission, `access(2)`) is refused with a message saying so, instead of failing later below it.
   */
  readonly ensureSessionsRoot: (path: string) => Effect.Effect<void, CreateDirError>
  /** Opens (creating if missing) for append: `O_APPEND|O_NOFOLLOW`, `0600`, then `fchmod 0600`. */
  readonly openAppend: (path: string) => Effect.Effect<AppendFile, StoreIoError>
  /** Reads exactly bytes `[start, end)` of a regular file (`O_NOFOLLOW`); a short read fails `UNEXPECTED_EOF`. */
  readonly readRange: (path: string, start: number, end: number) => Effect.Effect<Uint8Array, StoreIoError>
  /**
   * Streams bytes `[start, end)` (default: to end of file) in chunks of at most `chunkSize`
   * (default 256 KiB), `O_NOFOLLOW`; memory stays bounded by one chunk per pull. With an explicit
   * `end`, a file shorter than `end` fails `UNEXPECTED_EOF`.
   */
  readonly stream: (path: string, options?: StreamOptions) => Stream.Stream<Uint8Array, StoreIoError>
  /**
   * Reads a whole regular file (`O_NOFOLLOW`) in chunks of `chunkSize` bytes into one reused
   * buffer, calling `onChunk` with each chunk in order; returns the bytes read. Far cheaper per
   * chunk than `stream` (used for the streamed SHA-256 of audit packs); the fiber yields every few
   * MiB, so a large file never monopolises the runtime.
   *
   * **Gotchas**: `onChunk` must consume the bytes synchronously (the buffer is overwritten by the
   * next read) and must not throw (a throw fails the read as a `StoreIoError`).
   */
  readonly forEachChunk: (
    path: string,
    chunkSize: number,
    onChunk: (chunk: Uint8Array) => void
  ) => Effect.Effect<number, StoreIoError>
  /**
   * docs/format.md#permissions no-follow read: ancestors validated, `O_NOFOLLOW`, must be a regular file. Missing →
   * `None`; a symlink is an error (`ELOOP`), never "missing".
   */
  readonly readFileNoFollow: (path: string) => Effect.Effect<Option.Option<Uint8Array>, StoreIoError>
  /**
   * docs/format.md#permissions atomic private write: parent ensured, destination must not be a symlink or non-file,
   * exclusive `0600` temp sibling `.<base>.<pid>.<nanos>.<attempt>.tmp`, write, fsync, close,
   * rename, fsync the parent directory; the temp file is removed on any failure.
   *
   * **Gotchas**: when the final directory fsync fails the new content is already visible but the
   * call fails, because its durability is unknown.
   */
  readonly writeAtomic: (path: string, data: Uint8Array | string) => Effect.Effect<void, StoreIoError>
  /**
   * `writeAtomic` with the content pulled from `chunks` (bounded memory; used by the cap rewrite to
   * replace `events.jsonl` with a suffix of itself). A failing or interrupted source removes the temp
   * file and leaves the destination untouched.
   */
  readonly writeAtomicStream: <E>(
    path: string,
    chunks: Stream.Stream<Uint8Array, E>
  ) => Effect.Effect<void, StoreIoError | E>
  /**
   * Opens an existing directory and keeps it for atomic writes of its children (`DirectoryHandle`):
   * ancestors validated as `readFileNoFollow` does, the directory itself opened without following a
   * link. Missing → `ENOENT`; a link → `ELOOP`.
   */
  readonly openDirectory: (path: string) => Effect.Effect<DirectoryHandle, StoreIoError>
  /** `lstat`: `None` when missing. */
  readonly lstat: (path: string) => Effect.Effect<Option.Option<FileInfo>, StoreIoError>
  /**
   * `lstat` of every path in one effect (`undefined` when missing), for scans of a whole sessions
   * root; any other error fails the batch (reported on the first path).
   */
  readonly lstatMany: (paths: ReadonlyArray<string>) => Effect.Effect<Array<FileInfo | undefined>, StoreIoError>
  /** Sorted names of a directory's direct children; a symlinked directory is refused (`ELOOP`). */
  readonly listDir: (path: string) => Effect.Effect<ReadonlyArray<string>, StoreIoError>
  /**
   * {@link SessionFsApi.listDir} with each child's type (an `lstat` of the child, never followed):
   * taken from the directory entries where the file system records it, so a scan of a sessions
   * root does not `lstat` every session directory; `undefined` when the child vanished meanwhile.
   */
  readonly listDirTypes: (
    path: string
  ) => Effect.Effect<
    ReadonlyArray<{ readonly name: string; readonly type: FileInfo["type"] | undefined }>,
    StoreIoError
  >
  /** `rename(2)`; not followed by a directory fsync. */
  readonly rename: (from: string, to: string) => Effect.Effect<void, StoreIoError>
  /** Unlinks a regular file or symlink (never its target); `false` when missing; a directory fails `EISDIR`. */
  readonly removeFile: (path: string) => Effect.Effect<boolean, StoreIoError>
  /** Removes a tree without following any link inside it (links are unlinked); missing is success. */
  readonly removeTree: (path: string) => Effect.Effect<void, StoreIoError>
  /** docs/format.md#permissions create-if-absent private file: creates an empty `0600` file, accepts an existing regular file. */
  readonly createFileIfAbsent: (path: string) => Effect.Effect<void, StoreIoError>
  /**
   * Creates the lock file if absent, opens it read/write without following links and takes a
   * non-blocking exclusive lock. Never fails: every error becomes `Unavailable`.
   */
  readonly tryLock: (path: string) => Effect.Effect<LockResult>
  /**
   * Probes a lock without creating the file: missing → `absent`; a symbolic link → `link` (never
   * followed); other open errors → `held` (fail safe); would block → `held`; granted → released at
   * once, `free`; other lock errors → `free`.
   */
  readonly probeLock: (path: string) => Effect.Effect<LockProbe>
  /** Canonical absolute path (all links resolved). */
  readonly realPath: (path: string) => Effect.Effect<string, StoreIoError>
  /** This process's id, as used in temp-file names. */
  readonly pid: number
}

/** Error codes the fault layer can inject. */
export type FaultCode = "ENOSPC" | "EIO" | "EACCES"

/** The system-call names the fault layer counts (`open`, `write`, `fsync`, `fdatasync`, `rename`, `lock`, …). */
export type FsOp = SysOp

/**
 * One planned fault. `Fail` makes call number `call` (0-based, counted since the last reset,
 * over all operations or only over `op` when given) throw `code`; `persistent` keeps failing
 * every later matching call too (a full disk). `TearWrite` makes the `call`-th `write` put
 * `keepBytes` bytes on disk and then fail with `code`.
 */
export type Fault =
  | {
    readonly _tag: "Fail"
    readonly call: number
    readonly code: FaultCode
    readonly op?: FsOp
    readonly persistent?: boolean
  }
  | { readonly _tag: "TearWrite"; readonly call: number; readonly keepBytes: number; readonly code: FaultCode }

/** The test-side handle of `SessionFs.layerFaulty`. */
export interface FaultControllerApi {
  /** Calls made since the last reset, over all operations (a clean run's total bounds an injection loop). */
  readonly calls: Effect.Effect<number>
  /** Calls made since the last reset, per operation. */
  readonly callsByOp: Effect.Effect<ReadonlyMap<FsOp, number>>
  /** The operation of every call since the last reset, in order (`trace[i]` is global call `i`). */
  readonly trace: Effect.Effect<ReadonlyArray<FsOp>>
  /** Faults that fired since the last reset. */
  readonly injected: Effect.Effect<number>
  /** Plans one more fault. */
  readonly arm: (fault: Fault) => Effect.Effect<void>
  /** Zeroes the counters, drops planned faults and leaves the crashed state; synced lengths are kept. */
  readonly reset: Effect.Effect<void>
  /**
   * Simulates power loss: every file written through `openAppend`/`writeAtomic`/`createFileIfAbsent`
   * is truncated to the length it had at its last `fsync`/`fdatasync` (or when first opened). Until
   * `reset`, every further call fails `EIO` — the "dead process" writes nothing more — except
   * `close`/`unlock`, which still release descriptors and locks as the kernel would.
   *
   * **Gotchas**: only file contents are modelled; a rename is treated as durable at once.
   */
  readonly crash: Effect.Effect<void>
}

/** Controls the faults of `SessionFs.layerFaulty` from a test. */
export class FaultController extends Context.Service<FaultController, FaultControllerApi>()(
  "@logbook/store/FaultController"
) {}

/**
 * The store's file-system service. `layerNode` is the real implementation; `layerFaulty(faults)`
 * runs the same implementation over counted, fault-injecting system calls and also provides a
 * `FaultController`.
 */
export class SessionFs extends Context.Service<SessionFs, SessionFsApi>()("@logbook/store/SessionFs") {
  /** The real file system. */
  static readonly layerNode: Layer.Layer<SessionFs> = Layer.sync(SessionFs, () => makeSessionFs(nodeSys, process.pid))

  /**
   * The real file system with fault injection, for tests: `faults` are armed from the start,
   * more can be armed through `FaultController`. Each build has its own counters.
   */
  static readonly layerFaulty = (
    faults: ReadonlyArray<Fault> = []
  ): Layer.Layer<SessionFs | FaultController> =>
    Layer.unwrap(Effect.sync(() => {
      const faulty = makeFaulty(nodeSys, faults)
      return Layer.merge(
        Layer.succeed(SessionFs, makeSessionFs(faulty.sys, process.pid)),
        Layer.succeed(FaultController, faulty.controller)
      )
    }))
}
