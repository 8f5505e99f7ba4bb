/**
 * The current Git state of a workspace, for the optional "Current workspace" section of the
 * HTML explanation report (docs/explain.md#the-html-report): `git status --porcelain` and
 * `git diff`, read-only, each bounded to 8 KiB and 2 seconds. A snapshot is never evidence of
 * what an agent did; the report says so.
 *
 * **Gotchas**: read-only means `--no-optional-locks` (plain `git status` may rewrite the index).
 * A failure (no git, not a work tree, timeout) is a snapshot that says why, never an error:
 * the report is still written.
 */
import type { WorkspaceSnapshot } from "@logbook/projections"
import { WORKSPACE_DIFF_LIMIT } from "@logbook/projections"
import { Context, Effect, Layer } from "effect"
import { execFile } from "node:child_process"

/** How long one git call may take. */
export const WORKSPACE_GIT_TIMEOUT_MS = 2000

/** What a git call printed, and whether it was cut at the bound. */
interface GitOutput {
  readonly text: string
  readonly truncated: boolean
  readonly failure: string | null
}

const git = (directory: string, args: ReadonlyArray<string>): Effect.Effect<GitOutput> =>
  Effect.callback<GitOutput>((resume) => {
    const child = execFile(
      "git",
      ["--no-optional-locks", "-C", directory, ...args],
      {
        encoding: "utf8",
        maxBuffer: WORKSPACE_DIFF_LIMIT,
        timeout: WORKSPACE_GIT_TIMEOUT_MS,
        env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0" }
      },
      (error, stdout, stderr) => {
        if (error === null) return resume(Effect.succeed({ text: stdout, truncated: false, failure: null }))
        if (error.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") {
          return resume(Effect.succeed({ text: stdout, truncated: true, failure: null }))
        }
        const why = error.killed
          ? `git ${args[0]} took longer than ${WORKSPACE_GIT_TIMEOUT_MS} ms`
          : (stderr.trim().split("\n")[0] ?? "") || error.message
        return resume(Effect.succeed({ text: "", truncated: false, failure: why }))
      }
    )
    return Effect.sync(() => child.kill())
  })

/** Reads workspace snapshots; `layerNode` runs git, tests may provide their own. */
export class WorkspaceGit extends Context.Service<WorkspaceGit, {
  /** The status and diff of the work tree containing `directory` (failures described, not raised). */
  readonly snapshot: (directory: string) => Effect.Effect<WorkspaceSnapshot>
}>()("@logbook/runtime/WorkspaceGit") {
  /** Runs the `git` on the PATH, read-only, with the 8 KiB and 2 s bounds. */
  static readonly layerNode = Layer.succeed(WorkspaceGit, {
    snapshot: Effect.fn("WorkspaceGit.snapshot")(function*(directory: string) {
      const status = yield* git(directory, ["status", "--porcelain=v1", "--untracked-files=normal"])
      if (status.failure !== null) {
        return { directory, status: "", diff: "", truncated: false, unavailable: status.failure }
      }
      const diff = yield* git(directory, ["diff", "--no-color", "--no-ext-diff", "HEAD"])
      return {
        directory,
        status: status.text,
        diff: diff.text,
        truncated: status.truncated || diff.truncated,
        unavailable: diff.failure === null ? null : `diff: ${diff.failure}`
      }
    })
  })
}
