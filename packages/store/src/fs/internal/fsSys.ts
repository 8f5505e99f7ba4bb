/**
 * The raw system calls `SessionFs` is built from, as one swappable record. The Node layer uses
 * `nodeSys` (thin synchronous `node:fs` calls plus the native lock); the fault layer wraps the
 * same record to count, fail, tear and crash every call, so each step of a composite operation
 * (the six steps of an atomic write, the walk of a directory ensure) is an injection point.
 *
 * Every function throws the Node error (an `Error` with a string `code`) on failure; callers
 * turn throws into typed errors with `Effect.try` or `Result.try`.
 */
import * as fs from "node:fs"
import type { Stats } from "node:fs"
import { nativeLock } from "./lockNative.ts"

/** The operation names the fault layer counts, one per system call. */
export type SysOp =
  | "open"
  | "close"
  | "read"
  | "write"
  | "fsync"
  | "fdatasync"
  | "fstat"
  | "ftruncate"
  | "fchmod"
  | "lstat"
  | "readdir"
  | "mkdir"
  | "rename"
  | "unlink"
  | "rmdir"
  | "realpath"
  | "access"
  | "lock"
  | "unlock"

/** A directory entry and its type as the directory records it (`undefined`: not recorded). */
export interface DirEntry {
  readonly name: string
  readonly type: "File" | "Directory" | "SymbolicLink" | "Other" | undefined
}

const entryType = (d: fs.Dirent): DirEntry["type"] =>
  d.isSymbolicLink()
    ? "SymbolicLink"
    : d.isDirectory()
    ? "Directory"
    : d.isFile()
    ? "File"
    : d.isFIFO() || d.isSocket() || d.isCharacterDevice() || d.isBlockDevice()
    ? "Other"
    : undefined

/** Synchronous system calls; each throws a Node-style error carrying `code`. */
export interface Sys {
  readonly open: (path: string, flags: number, mode: number) => number
  readonly close: (fd: number) => void
  readonly read: (fd: number, buffer: Uint8Array, offset: number, length: number, position: number | null) => number
  readonly write: (fd: number, buffer: Uint8Array, offset: number, length: number) => number
  readonly fsync: (fd: number) => void
  readonly fdatasync: (fd: number) => void
  readonly fstat: (fd: number) => Stats
  readonly ftruncate: (fd: number, length: number) => void
  readonly fchmod: (fd: number, mode: number) => void
  /** `undefined` when the path does not exist (ENOENT). */
  readonly lstat: (path: string) => Stats | undefined
  readonly readdir: (path: string) => Array<string>
  /**
   * `readdir(2)` with each entry's type from the directory itself (`d_type`, no `lstat`);
   * `undefined` where the file system does not say (the caller asks `lstat`).
   */
  readonly readdirTypes: (path: string) => Array<DirEntry>
  readonly mkdir: (path: string, mode: number) => void
  readonly rename: (from: string, to: string) => void
  readonly unlink: (path: string) => void
  readonly rmdir: (path: string) => void
  readonly realpath: (path: string) => string
  /** `access(2)`: throws unless this process has every permission of `mode` on `path`. */
  readonly access: (path: string, mode: number) => void
  /** Non-blocking exclusive lock: `true` granted, `false` would block. */
  readonly tryLock: (fd: number) => boolean
  readonly unlock: (fd: number) => void
}

// A FIFO (or a device) planted at a path the store reads would block `open(2)` until a writer
// comes, and nothing but SIGKILL ends a blocked synchronous open: every file open is non-blocking,
// and the `fstat` that follows refuses whatever is not a regular file. On regular files
// `O_NONBLOCK` changes nothing.
const NONBLOCK = fs.constants.O_NONBLOCK ?? 0

/**
 * `open(2)` flags used by the store (`O_NOFOLLOW`/`O_DIRECTORY`/`O_NONBLOCK` are 0 where the OS lacks
 * them). File opens are `O_NONBLOCK`, so a FIFO at the path cannot stall the open.
 */
export const Flags = {
  readNoFollow: fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | NONBLOCK,
  readDirNoFollow: fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0) | (fs.constants.O_NOFOLLOW ?? 0),
  appendCreateNoFollow: fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT |
    (fs.constants.O_NOFOLLOW ?? 0) | NONBLOCK,
  createExclusiveNoFollow: fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL |
    (fs.constants.O_NOFOLLOW ?? 0),
  readWriteNoFollow: fs.constants.O_RDWR | (fs.constants.O_NOFOLLOW ?? 0) | NONBLOCK
} as const

/** `access(2)` mode of a directory the store creates entries in: write and search. */
export const WRITE_SEARCH = fs.constants.W_OK | fs.constants.X_OK

/** True when `flags` opens for writing (write-only or read/write). */
export const isWriteOpen = (flags: number): boolean =>
  (flags & fs.constants.O_WRONLY) !== 0 || (flags & fs.constants.O_RDWR) !== 0

/** The real system calls. */
export const nodeSys: Sys = {
  open: (path, flags, mode) => fs.openSync(path, flags, mode),
  close: (fd) => fs.closeSync(fd),
  read: (fd, buffer, offset, length, position) => fs.readSync(fd, buffer, offset, length, position),
  write: (fd, buffer, offset, length) => fs.writeSync(fd, buffer, offset, length),
  fsync: (fd) => fs.fsyncSync(fd),
  fdatasync: (fd) => fs.fdatasyncSync(fd),
  fstat: (fd) => fs.fstatSync(fd),
  ftruncate: (fd, length) => fs.ftruncateSync(fd, length),
  fchmod: (fd, mode) => fs.fchmodSync(fd, mode),
  lstat: (path) => fs.lstatSync(path, { throwIfNoEntry: false }),
  readdir: (path) => fs.readdirSync(path),
  readdirTypes: (path) =>
    fs.readdirSync(path, { withFileTypes: true }).map((d) => ({ name: d.name, type: entryType(d) })),
  mkdir: (path, mode) => fs.mkdirSync(path, { mode }),
  rename: (from, to) => fs.renameSync(from, to),
  unlink: (path) => fs.unlinkSync(path),
  rmdir: (path) => fs.rmdirSync(path),
  realpath: (path) => fs.realpathSync.native(path),
  access: (path, mode) => fs.accessSync(path, mode),
  tryLock: (fd) => nativeLock().tryLock(fd, { shared: false }),
  unlock: (fd) => nativeLock().unlock(fd)
}
