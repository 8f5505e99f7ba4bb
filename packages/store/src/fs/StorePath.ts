/**
 * How the store makes a user-given path absolute (docs/format.md#permissions): relative to the
 * working directory, but never normalised, so a `..` component survives into every `SessionFs`
 * call, which refuses it — as the reference rejects `..` components — instead of silently using
 * another directory (`<ws>/a/../b` is not `<ws>/b` when `<ws>/a` does not exist).
 */
import * as NodePath from "node:path"

/**
 * `path` made absolute against the working directory. A path without `..` components is also
 * normalised (`NodePath.resolve`); one with a `..` component keeps it, so the file-system seam
 * refuses it (and every path joined below it) with `EINVAL`.
 *
 * **Gotchas**: join children below the result with {@link childPath}, not `NodePath.join`, which
 * would normalise the `..` away again.
 */
export const absolutePath = (path: string): string => {
  if (!hasDotDot(path)) return NodePath.resolve(path)
  return NodePath.isAbsolute(path) ? path : `${process.cwd()}${NodePath.sep}${path}`
}

/** `parent/name` for a plain child name; normalises only when `parent` holds no `..` component. */
export const childPath = (parent: string, ...names: ReadonlyArray<string>): string =>
  hasDotDot(parent) ? [parent, ...names].join(NodePath.sep) : NodePath.join(parent, ...names)

/**
 * `childPath(parent, name)` without `name`: the prefix a plain child name (a directory entry) is
 * appended to, so a scan of 20 000 session directories concatenates instead of normalising each
 * joined path (a tenth of a `logbook sessions` listing).
 */
export const childPrefix = (parent: string): string => childPath(parent, "x").slice(0, -1)

/** Whether `path` has a `..` component (either separator). */
export const hasDotDot = (path: string): boolean => path.includes("..") && path.split(/[\\/]/).includes("..")
