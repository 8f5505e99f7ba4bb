/**
 * The atomic private write of the Node layer, step by step: a temporary sibling created `wx` and
 * 0600 (never over a link), written, fsynced, renamed over the destination (refused when a link
 * or a directory was planted there), and the directory fsynced — through a held directory
 * descriptor when the caller has one, else by walking the path.
 *
 * **Gotchas**: a failed step unlinks the temporary; the destination is only ever replaced whole.
 */
import { Result } from "effect"
import type { Stats } from "node:fs"
import { basename, dirname, join } from "node:path"
import type { FileInfo } from "../SessionFs.ts"
import { errorCode, FsRefusal } from "./fsErrors.ts"
import { fsyncDir, walkDir, withFd, writeAll } from "./fsPath.ts"
import type { Sys } from "./fsSys.ts"
import { Flags } from "./fsSys.ts"

/** How many temporary names are tried before an atomic write gives up. */
export const TEMP_ATTEMPTS = 32
/** Every file the store creates is private. */
export const FILE_MODE = 0o600
/** Every directory the store creates is private. */
export const DIR_MODE = 0o700

/** The store's view of an `lstat`/`fstat` result. */
export const fileInfo = (stats: Stats): FileInfo => ({
  type: stats.isSymbolicLink() ? "SymbolicLink" : stats.isDirectory() ? "Directory" : stats.isFile() ? "File" : "Other",
  size: stats.size,
  mtimeMs: stats.mtimeMs
})

/** Runs `use` on a fresh descriptor; closes it only when `use` throws (success hands it on). */
export const guardFd = <A>(sys: Sys, fd: number, use: (fd: number) => A): A => {
  const result = Result.try(() => use(fd))
  if (Result.isFailure(result)) {
    Result.try(() => sys.close(fd))
  }
  return Result.getOrThrow(result)
}

/** The size of the regular file open at `fd`; anything else is refused (`EISDIR` / `EINVAL`). */
export const requireRegular = (sys: Sys, fd: number): number => {
  const stats = sys.fstat(fd)
  if (!stats.isFile()) {
    throw new FsRefusal(stats.isDirectory() ? "EISDIR" : "EINVAL", "not a regular file")
  }
  return stats.size
}

/** Refuses an existing destination that is a symlink or not a regular file. */
export const requireReplaceable = (sys: Sys, path: string): void => {
  const stats = sys.lstat(path)
  if (stats === undefined || stats.isFile()) {
    return
  }
  if (stats.isSymbolicLink()) {
    throw new FsRefusal("ELOOP", "destination is a symbolic link")
  }
  throw new FsRefusal(stats.isDirectory() ? "EISDIR" : "EINVAL", "destination is not a regular file")
}

/** docs/format.md#permissions create-if-absent private file: create `0600` without following links, or accept a regular file. */
export const createIfAbsentSync = (sys: Sys, path: string): void => {
  const created = Result.try(() => sys.open(path, Flags.createExclusiveNoFollow, FILE_MODE))
  if (Result.isSuccess(created)) {
    withFd(sys, created.success, (fd) => sys.fchmod(fd, FILE_MODE))
    return
  }
  if (errorCode(created.failure) !== "EEXIST") {
    throw created.failure
  }
  const stats = sys.lstat(path)
  if (stats === undefined) {
    throw created.failure
  }
  if (stats.isSymbolicLink()) {
    throw new FsRefusal("ELOOP", "refusing a symbolic link")
  }
  if (!stats.isFile()) {
    throw new FsRefusal("EINVAL", "exists and is not a regular file")
  }
}

/** A temporary sibling being written: its path and descriptor. */
export interface TempFile {
  readonly fd: number
  readonly path: string
}

/** Creates a fresh 0600 temporary next to `base` in `dir` (`wx`, never over a link). */
export const createTemp = (sys: Sys, dir: string, base: string, pid: number, nanos: bigint): TempFile => {
  for (let attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
    const path = join(dir, `.${base}.${pid}.${nanos}.${attempt}.tmp`)
    const opened = Result.try(() => sys.open(path, Flags.createExclusiveNoFollow, FILE_MODE))
    if (Result.isSuccess(opened)) {
      return { fd: opened.success, path }
    }
    if (errorCode(opened.failure) !== "EEXIST") {
      throw opened.failure
    }
  }
  throw new FsRefusal("EEXIST", `no free temporary name after ${TEMP_ATTEMPTS} attempts`)
}

/** Runs `step` on an open temp file; on failure closes and removes the temp, then rethrows. */
export const guardTemp = (sys: Sys, temp: TempFile, step: () => void): void => {
  const done = Result.try(step)
  if (Result.isFailure(done)) {
    Result.try(() => sys.close(temp.fd))
    Result.try(() => sys.unlink(temp.path))
    throw done.failure
  }
}

/**
 * Where an atomic write happens: `dir` is the prefix that names the destination and its temp
 * sibling in system calls, and `syncDir` makes a rename in it durable. Either a path walked before
 * each write (`walkedDir`) or a held directory descriptor named `/proc/self/fd/<fd>` (`openDirectorySync`).
 */
export interface WriteDir {
  readonly dir: string
  readonly syncDir: () => void
}

/**
 * Directory `dir` walked now (created `0700` when missing) and fsynced by path after the rename.
 *
 * **Gotchas**: an existing directory's mode is left alone — callers that own the directory force
 * its mode with `ensurePrivateDir`.
 */
export const walkedDir = (sys: Sys, dir: string): WriteDir => {
  walkDir(sys, dir, "ensure")
  return { dir, syncDir: () => fsyncDir(sys, dir) }
}

/**
 * docs/format.md#permissions atomic private write, steps 1–3 in `place`: refuse a symlinked or
 * non-regular destination, create the exclusive `0600` temp sibling.
 */
export const prepareTempIn = (sys: Sys, pid: number, place: WriteDir, base: string, nanos: bigint): TempFile => {
  requireReplaceable(sys, join(place.dir, base))
  const temp = createTemp(sys, place.dir, base, pid, nanos)
  guardTemp(sys, temp, () => sys.fchmod(temp.fd, FILE_MODE))
  return temp
}

/**
 * docs/format.md#permissions atomic private write, steps 4–6 after the bytes are written: fsync, close, rename, then
 * the parent-directory fsync the reference omits; the temp is removed if any step before the
 * rename fails.
 *
 * **Gotchas**: the rename is durable only after the parent fsync; when that last step fails the
 * new content is visible but the write still fails, because its durability is unknown.
 */
export const commitTemp = (sys: Sys, temp: TempFile, place: WriteDir, base: string): void => {
  guardTemp(sys, temp, () => sys.fsync(temp.fd))
  const moved = Result.try(() => {
    // A close error can carry a deferred write error (NFS): it fails the write.
    sys.close(temp.fd)
    sys.rename(temp.path, join(place.dir, base))
  })
  if (Result.isFailure(moved)) {
    Result.try(() => sys.unlink(temp.path))
    throw moved.failure
  }
  place.syncDir()
}

/** Writes `bytes` to `base` in a directory atomically (temporary, fsync, rename, directory fsync). */
export const writeAtomicIn = (
  sys: Sys,
  pid: number,
  place: WriteDir,
  base: string,
  bytes: Uint8Array,
  nanos: bigint
): void => {
  const temp = prepareTempIn(sys, pid, place, base, nanos)
  guardTemp(sys, temp, () => writeAll(sys, temp.fd, bytes))
  commitTemp(sys, temp, place, base)
}

/** Writes `path` atomically, walking its parent directory. */
export const writeAtomicSync = (sys: Sys, pid: number, path: string, bytes: Uint8Array, nanos: bigint): void =>
  writeAtomicIn(sys, pid, walkedDir(sys, dirname(path)), basename(path), bytes, nanos)
