/**
 * On-disk validation of a matrix specification (docs/matrix.md#spec `validate_workspace`): every
 * task workspace and declared input must exist inside the workspace root once all links are
 * resolved. The pure rules (relative paths, no `..`) live in `Matrix.validateSpec`; this
 * module adds what needs the file system, and reaches it only through `SessionFs`.
 */
import type { MatrixSpec } from "@logbook/domain"
import { Matrix, MatrixError } from "@logbook/domain"
import { Effect, Option } from "effect"
import * as NodePath from "node:path"
import { isInside } from "../fs/internal/fsPath.ts"
import { SessionFs } from "../fs/SessionFs.ts"
import type { StoreIoError } from "../fs/StoreError.ts"

/** OS codes meaning "this path does not name anything usable": a spec problem, not an I/O fault. */
const ABSENT_CODES: ReadonlySet<string> = new Set(["ENOENT", "ENOTDIR", "ELOOP", "ENAMETOOLONG"])

const q = (text: string): string => JSON.stringify(text)

/**
 * Resolves `path` to its canonical form; a path that does not exist (or runs through a
 * non-directory or a link loop) becomes a `MatrixError` with `what` in the message, any
 * other failure stays a `StoreIoError`.
 */
const canonical = (fs: SessionFs["Service"], path: string, what: string) =>
  fs.realPath(path).pipe(
    Effect.catchIf(
      (error) => ABSENT_CODES.has(error.code),
      (error) => Effect.fail(new MatrixError({ message: `${what} does not exist (${error.code})` }))
    )
  )

const typeOf = (fs: SessionFs["Service"], path: string) =>
  Effect.map(fs.lstat(path), Option.match({ onNone: () => "missing", onSome: (info) => info.type }))

/**
 * Checks a spec against the workspace `root` (docs/matrix.md#spec): the root is canonicalised; each
 * task's workspace, resolved against it with every link followed, must be the root or below
 * it and be a directory; each input, resolved against the task's canonical workspace, must
 * land inside the root and be a regular file. A link that escapes the root is rejected, one
 * that stays inside is accepted. Paths the pure rules reject (absolute, `..`, empty) fail
 * before any file-system call.
 *
 * **Gotchas**: this is a point-in-time check. The runtime must still contain its workers; a
 * link planted after validation is not caught here.
 */
export const validateWorkspace = Effect.fn("MatrixWorkspace.validateWorkspace")(function*(
  spec: MatrixSpec,
  root: string
): Effect.fn.Return<void, MatrixError | StoreIoError, SessionFs> {
  const fs = yield* SessionFs
  const rootReal = yield* canonical(fs, root, `workspace root ${q(root)}`)
  if ((yield* typeOf(fs, rootReal)) !== "Directory") {
    return yield* new MatrixError({ message: `workspace root ${q(root)} is not a directory` })
  }
  for (const task of spec.tasks) {
    const label = `task ${q(task.id)}`
    if (!Matrix.isSafeRelativePath(task.workspace)) {
      return yield* new MatrixError({ message: `${label} workspace must be a relative path inside the root` })
    }
    const workspaceWhat = `${label} workspace ${q(task.workspace)}`
    const workspace = yield* canonical(fs, NodePath.join(rootReal, task.workspace), workspaceWhat)
    if (!isInside(rootReal, workspace)) {
      return yield* new MatrixError({ message: `${workspaceWhat} resolves outside the workspace root` })
    }
    if ((yield* typeOf(fs, workspace)) !== "Directory") {
      return yield* new MatrixError({ message: `${workspaceWhat} is not a directory` })
    }
    for (const input of task.inputs) {
      if (!Matrix.isSafeRelativePath(input)) {
        return yield* new MatrixError({ message: `${label} input must be a relative path inside the root` })
      }
      const inputWhat = `${label} input ${q(input)}`
      const resolved = yield* canonical(fs, NodePath.join(workspace, input), inputWhat)
      if (!isInside(rootReal, resolved)) {
        return yield* new MatrixError({ message: `${inputWhat} resolves outside the workspace root` })
      }
      if ((yield* typeOf(fs, resolved)) !== "File") {
        return yield* new MatrixError({ message: `${inputWhat} is not a regular file` })
      }
    }
  }
})
