/**
 * The symlink-safe directory walk of docs/format.md#permissions and small synchronous helpers shared by the
 * `SessionFs` Node implementation. Everything here runs inside one `Effect.try`, throws Node
 * errors or `FsRefusal`s, and never uses `try` statements (`Result.try` handles the few errors
 * that are expected, such as a lost `mkdir` race).
 */
import { Result } from "effect"
import { join, parse, resolve, sep } from "node:path"
import { errorCode, FsRefusal } from "./fsErrors.ts"
import type { Sys } from "./fsSys.ts"
import { Flags } from "./fsSys.ts"

/** Rejects empty paths and any `..` component, then returns the absolute, normalised path. */
export const checkedAbsolute = (path: string): string => {
  if (path.length === 0) {
    throw new FsRefusal("EINVAL", "empty path")
  }
  if (path.includes("..") && path.split(/[\\/]/).includes("..")) {
    throw new FsRefusal("EINVAL", "path contains a '..' component")
  }
  return isNormalAbsolute(path) ? path : resolve(path)
}

// An absolute POSIX path `resolve` would return unchanged: no empty or `.` component and no
// trailing separator (a root scan checks tens of thousands of paths joined that way).
const isNormalAbsolute = (path: string): boolean =>
  sep === "/" && path.startsWith("/") && path.length > 1 && !path.endsWith("/") && !path.includes("//") &&
  !path.includes("/./") && !path.endsWith("/.") && !path.includes("\\")

/** True when canonical `target` is `parent` itself or below it. */
export const isInside = (parent: string, target: string): boolean =>
  target === parent || target.startsWith(parent.endsWith(sep) ? parent : parent + sep)

/** How `walkDir` treats missing components. */
export type WalkMode = "ensure" | "validate"

/**
 * Walks `dir` from the file-system root, component by component. For each existing component:
 * a symlink is refused when it is the final component, and otherwise tolerated only when its
 * canonical target is a directory inside its canonical parent (platform aliases such as macOS's
 * `/var` → `/private/var`); a non-directory is refused. Missing components are created `0700`
 * in `"ensure"` mode; in `"validate"` mode the walk stops and returns `false`.
 *
 * **Gotchas**: the check is a walk, not an `openat` chain, so it narrows but cannot close a race
 * with a concurrent process swapping a component for a link; final opens add `O_NOFOLLOW`.
 */
export const walkDir = (sys: Sys, dir: string, mode: WalkMode): boolean => {
  const absolute = checkedAbsolute(dir)
  const parts = absolute.split(sep).filter((part) => part.length > 0)
  let current = parse(absolute).root
  for (let index = 0; index < parts.length; index++) {
    const next = join(current, parts[index] ?? "")
    const isFinal = index === parts.length - 1
    let stats = sys.lstat(next)
    if (stats === undefined) {
      if (mode === "validate") {
        return false
      }
      const made = Result.try(() => sys.mkdir(next, 0o700))
      if (Result.isFailure(made)) {
        if (errorCode(made.failure) !== "EEXIST") {
          throw made.failure
        }
        // Lost a race with another creator: judge whatever is there now.
        stats = sys.lstat(next)
        if (stats === undefined) {
          throw made.failure
        }
      } else {
        current = next
        continue
      }
    }
    if (stats.isSymbolicLink()) {
      if (isFinal) {
        throw new FsRefusal("ELOOP", `refusing to use symlinked directory ${next}`)
      }
      const target = sys.realpath(next)
      const parentReal = sys.realpath(current)
      if (!isInside(parentReal, target)) {
        throw new FsRefusal("ELOOP", `symlinked ancestor ${next} resolves outside its parent (${target})`)
      }
      const targetStats = sys.lstat(target)
      if (targetStats === undefined || !targetStats.isDirectory()) {
        throw new FsRefusal("ENOTDIR", `symlinked ancestor ${next} does not resolve to a directory`)
      }
    } else if (!stats.isDirectory()) {
      throw new FsRefusal("ENOTDIR", `${next} exists and is not a directory`)
    }
    current = next
  }
  return true
}

/**
 * Runs `use` on an open descriptor and closes it afterwards whatever happens; a close error is
 * ignored (use only for descriptors whose close carries no durability meaning).
 */
export const withFd = <A>(sys: Sys, fd: number, use: (fd: number) => A): A => {
  const result = Result.try(() => use(fd))
  Result.try(() => sys.close(fd))
  return Result.getOrThrow(result)
}

/** Opens a directory without following a final symlink and fsyncs it, so a rename in it is durable. */
export const fsyncDir = (sys: Sys, dir: string): void => {
  const fd = sys.open(dir, Flags.readDirNoFollow, 0)
  withFd(sys, fd, (d) => sys.fsync(d))
}

/** Forces `mode` on a directory, refusing a final symlink (`O_NOFOLLOW`) rather than chmod-ing its target. */
export const chmodDirNoFollow = (sys: Sys, dir: string, mode: number): void => {
  const fd = sys.open(dir, Flags.readDirNoFollow, 0)
  withFd(sys, fd, (d) => sys.fchmod(d, mode))
}

/** Writes every byte of `bytes` at the descriptor's position, looping over partial writes. */
export const writeAll = (sys: Sys, fd: number, bytes: Uint8Array): void => {
  let offset = 0
  while (offset < bytes.length) {
    const written = sys.write(fd, bytes, offset, bytes.length - offset)
    if (written <= 0) {
      throw new FsRefusal("EIO", `write made no progress after ${offset} of ${bytes.length} bytes`)
    }
    offset += written
  }
}

/**
 * Fills `buffer` from `position`, looping over partial reads; returns the bytes read, which is
 * less than `buffer.length` only at end of file.
 */
export const readFully = (sys: Sys, fd: number, buffer: Uint8Array, position: number): number => {
  let filled = 0
  while (filled < buffer.length) {
    const count = sys.read(fd, buffer, filled, buffer.length - filled, position + filled)
    if (count === 0) {
      break
    }
    filled += count
  }
  return filled
}

/**
 * Removes `path` without ever following a link: links and files are unlinked, real directories
 * are emptied recursively and removed. Entries that vanish meanwhile are fine.
 */
export const removeTreeSync = (sys: Sys, path: string): void => {
  const stats = sys.lstat(path)
  if (stats === undefined) {
    return
  }
  if (!stats.isDirectory()) {
    ignoreMissing(() => sys.unlink(path))
    return
  }
  const children = Result.try(() => sys.readdir(path))
  if (Result.isFailure(children)) {
    if (errorCode(children.failure) === "ENOENT") {
      return
    }
    throw children.failure
  }
  for (const child of children.success) {
    removeTreeSync(sys, join(path, child))
  }
  ignoreMissing(() => sys.rmdir(path))
}

/** Runs `f`, treating ENOENT as success. */
export const ignoreMissing = (f: () => void): void => {
  const result = Result.try(f)
  if (Result.isFailure(result) && errorCode(result.failure) !== "ENOENT") {
    throw result.failure
  }
}
