/**
 * The one deletion primitive for session directories (docs/log.md#retention-run) and the
 * trash it goes through. A session is first renamed into a hidden trash directory inside the
 * sessions root — one atomic step after which it no longer lists as a session — and only then
 * removed recursively, so a crash mid-delete never leaves a half-deleted session that still
 * looks valid. Leftover trash is emptied by the next retention run.
 */
import { Effect, Option } from "effect"
import { dirname, join, resolve } from "node:path"
import type { SessionFsApi } from "../../fs/SessionFs.ts"
import type { StoreError } from "../../fs/StoreError.ts"

/**
 * Name of the trash directory, a direct child of the sessions root. Session directory names
 * never start with `.` (both sanitisers strip leading dots), so no session can be called this
 * and every enumeration skips dot-names.
 */
export const TRASH_DIR = ".logbook-trash"

/**
 * Whether `name` can be a session directory: one path component, not empty, not starting with
 * `.` (which also excludes `.`, `..`, the trash and atomic-write temporaries), without separators
 * or NUL.
 */
export const isSessionEntryName = (name: string): boolean =>
  name.length > 0 && !name.startsWith(".") && !/[/\\\0]/u.test(name)

/**
 * Empties the trash left by an interrupted removal. A link planted in place of the trash
 * directory is unlinked (never followed); anything else there is left alone.
 */
export const emptyTrash = (fs: SessionFsApi, sessionsDir: string): Effect.Effect<void, StoreError> =>
  Effect.gen(function*() {
    const trash = join(resolve(sessionsDir), TRASH_DIR)
    const info = yield* fs.lstat(trash)
    if (Option.isNone(info)) return
    if (info.value.type === "SymbolicLink") {
      yield* fs.removeFile(trash)
      return
    }
    if (info.value.type !== "Directory") return
    for (const entry of yield* fs.listDir(trash)) yield* fs.removeTree(join(trash, entry))
  })

/**
 * Removes the session directory `name` directly below `sessionsDir`: only a valid entry name
 * whose path's parent is exactly the root, and only while a fresh `lstat` reports a real
 * directory. It is renamed into the trash (`<name>.<pid>.<seq>`), then removed without following
 * any link inside it. Returns `true` only when this call removed the directory; `false` when it
 * declined (bad name, symlink, not a directory) or the directory was already gone. Errors are
 * returned, never swallowed.
 *
 * **Gotchas**: an error after the rename leaves the session in the trash — no longer listed,
 * deleted by the next run. A swap of the directory for a link between the `lstat` and the rename
 * moves only the link into the trash, where it is unlinked, never followed, and the call returns
 * `false`. The root is not
 * fsynced after the rename: after a power loss the session may reappear, but whole.
 */
export const removeSessionDir = (
  fs: SessionFsApi,
  sessionsDir: string,
  name: string,
  seq: number
): Effect.Effect<boolean, StoreError> =>
  Effect.gen(function*() {
    if (!isSessionEntryName(name)) return false
    const root = resolve(sessionsDir)
    const dir = join(root, name)
    if (dirname(dir) !== root) return false
    const info = yield* fs.lstat(dir)
    if (Option.isNone(info) || info.value.type !== "Directory") return false
    const trash = join(root, TRASH_DIR)
    yield* fs.ensurePrivateDir(trash)
    const target = join(trash, `${name}.${fs.pid}.${seq}`)
    // A leftover of an earlier process with the same pid would make the rename fail.
    if (Option.isSome(yield* fs.lstat(target))) yield* fs.removeTree(target)
    const moved = yield* fs.rename(dir, target).pipe(
      Effect.as(true),
      Effect.catchIf((e) => e.code === "ENOENT", () => Effect.succeed(false))
    )
    if (!moved) return false
    // What the rename moved may be a link swapped in after the `lstat`: unlink it (removeTree
    // never follows links) but do not report a session as removed.
    const movedInfo = yield* fs.lstat(target)
    yield* fs.removeTree(target)
    return Option.isSome(movedInfo) && movedInfo.value.type === "Directory"
  })
