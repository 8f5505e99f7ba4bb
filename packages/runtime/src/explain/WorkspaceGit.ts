/**
 * The current Git state of a workspace, for the optional "Current workspace" section of the
 * HTML explanation report (docs/explain.md#the-html-report): `git status --porcelain` and
 * `git diff`, read-only, each bounded to 8 KiB and 2 seconds. A snapshot is never evidence of
 * what an agent did; the report says so.
 *
 * **Gotchas**: read-only means `--no-optional-locks` (plain `git status` may rewrite the index).
 * A failure (no git, not a work tree, timeout) is a snapshot that says why, never an error:
 * the report is still written. The repository is untrusted (an agent may have written its
 * config and `.gitattributes`), so git runs nothing it names (docs/security.md#external-programs):
 * `core.fsmonitor=false`, `core.hooksPath=/dev/null`, every configured `filter.<driver>` emptied,
 * `--no-textconv --no-ext-diff`, submodules ignored, and no `GIT_*` variable of the caller's
 * environment passed on.
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

/** The options every git call starts with: read-only, and nothing the repository configured runs. */
export const GIT_SAFETY_OPTIONS: ReadonlyArray<string> = [
  "--no-pager",
  "--no-optional-locks",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.untrackedCache=false"
]

/**
 * The environment git runs with: the caller's without any `GIT_*` variable (a session could have
 * set `GIT_DIR`, `GIT_CONFIG_*`, `GIT_EXTERNAL_DIFF`, …), plus no optional locks and no prompts.
 */
export const gitEnvironment = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(env).filter(([name]) => !name.toUpperCase().startsWith("GIT_"))),
  GIT_OPTIONAL_LOCKS: "0",
  GIT_TERMINAL_PROMPT: "0"
})

/**
 * `-c filter.<driver>.clean= -c …smudge= -c …process=` for each driver named in `configNames`
 * (the output of `git config --name-only --get-regexp ^filter\.`): `git status` and `git diff`
 * run a path's clean filter to compare it, so every configured filter is emptied. `undefined` when
 * a driver's name contains `=` (a `-c` option cannot name it, so it could not be disabled).
 */
export const filterOverrides = (configNames: string): Array<string> | undefined => {
  const drivers = new Set<string>()
  for (const line of configNames.split("\n")) {
    const match = /^filter\.(.+)\.[^.]+$/u.exec(line.trim())
    if (match?.[1] !== undefined) drivers.add(match[1])
  }
  if ([...drivers].some((d) => d.includes("="))) return undefined
  return [...drivers].flatMap((
    d
  ) => ["-c", `filter.${d}.clean=`, "-c", `filter.${d}.smudge=`, "-c", `filter.${d}.process=`])
}

const git = (directory: string, args: ReadonlyArray<string>): Effect.Effect<GitOutput> =>
  Effect.callback<GitOutput>((resume) => {
    const child = execFile(
      "git",
      [...GIT_SAFETY_OPTIONS, "-C", directory, ...args],
      {
        encoding: "utf8",
        maxBuffer: WORKSPACE_DIFF_LIMIT,
        timeout: WORKSPACE_GIT_TIMEOUT_MS,
        env: gitEnvironment(process.env)
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
      // Reading config runs nothing; no filter configured is exit 1 with no output.
      const filters = filterOverrides(
        (yield* git(directory, ["config", "--name-only", "--get-regexp", "^filter\\."])).text
      )
      if (filters === undefined) {
        const unavailable = "the repository configures a filter driver that cannot be disabled (its name contains =)"
        return { directory, status: "", diff: "", truncated: false, unavailable }
      }
      const status = yield* git(directory, [
        ...filters,
        "status",
        "--porcelain=v1",
        "--untracked-files=normal",
        "--ignore-submodules=all"
      ])
      if (status.failure !== null) {
        return { directory, status: "", diff: "", truncated: false, unavailable: status.failure }
      }
      const diff = yield* git(directory, [
        ...filters,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=all",
        "HEAD"
      ])
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
