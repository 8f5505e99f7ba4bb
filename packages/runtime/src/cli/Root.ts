/**
 * The root `logbook` command and its shared flags (`--workspace`, `--sessions-dir`), and where
 * the sessions root is for this invocation: `--sessions-dir`, else `LOGBOOK_SESSIONS_DIR`, else
 * `<workspace>/.logbook/sessions` with the workspace defaulting to the current directory. Every
 * command resolves its root here, so every command refuses an unusable root the same way: an
 * empty flag is a usage error, a root that is a symbolic link or not a directory an I/O error
 * (a missing root is fine: readers find no sessions, writers create it).
 */
import { absolutePath, defaultSessionsDir, SessionFs, StoreIoError } from "@logbook/store"
import { Config, Context, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { resolve } from "node:path"
import { UsageError } from "./Errors.ts"

/** The version `logbook --version` prints. */
export const CLI_VERSION = "0.1.0"

/** The root command; subcommands read its shared flags with `yield* rootCommand`. */
export const rootCommand = Command.make("logbook").pipe(
  Command.withSharedFlags({
    workspace: Flag.String("workspace").pipe(
      Flag.withDescription("Workspace whose .logbook/sessions holds the store (default: the current directory)"),
      Flag.optional
    ),
    sessionsDir: Flag.String("sessions-dir").pipe(
      Flag.withDescription(
        "Sessions root to use instead of <workspace>/.logbook/sessions (also LOGBOOK_SESSIONS_DIR); " +
          "e.g. <workspace>/.vtcode/sessions for a VT Code store"
      ),
      Flag.optional
    )
  }),
  Command.withDescription(
    "Inspect and maintain Logbook session stores: record a demo session, append events, list sessions, " +
      "show a session, print turns and events (or follow them live), verify integrity, apply retention, inspect matrices, goals and progress. " +
      "Exit codes: 0 ok, 1 failure, 2 usage, 3 not found, 4 evicted turn or invalid audit pack, 5 integrity problem found."
  ),
  Command.withExamples([
    { command: "logbook demo", description: "Record a simulated session, then follow the printed commands" },
    { command: "logbook sessions", description: "List the sessions of ./.logbook/sessions" },
    { command: "logbook --workspace ~/repo show <session>", description: "Describe a session of another workspace" }
  ])
)

/** How the user spelled the location flags, so printed follow-up commands can repeat them. */
export interface Location {
  readonly workspace: string
  readonly sessionsDir: string
  /** `--workspace` / `--sessions-dir` as given (to repeat in printed commands), or none. */
  readonly flags: ReadonlyArray<string>
}

/** An empty `--workspace` or `--sessions-dir` would silently mean the current directory: refused. */
const nonEmpty = (flag: string, value: Option.Option<string>) =>
  Option.isSome(value) && value.value.length === 0
    ? Effect.fail(
      new UsageError({
        detail: `${flag} is empty`,
        hint: `give ${flag} a directory (\`${flag} .\` for the current one), or leave the flag out`
      })
    )
    : Effect.void

/**
 * Refuses a sessions root that exists but is not a real directory: a symbolic link (never
 * followed, as everywhere in the store) or a file. A missing root is usable.
 */
export const checkSessionsRoot = Effect.fn("cli.checkSessionsRoot")(function*(sessionsDir: string) {
  const fs = yield* SessionFs
  const info = yield* fs.lstat(sessionsDir)
  if (Option.isNone(info) || info.value.type === "Directory") return
  const link = info.value.type === "SymbolicLink"
  return yield* new StoreIoError({
    operation: "cli.root",
    path: sessionsDir,
    code: link ? "ELOOP" : "ENOTDIR",
    detail: link
      ? "the sessions root is a symbolic link (the store never follows links)"
      : `the sessions root is a ${info.value.type === "File" ? "regular file" : "special file"}, not a directory`
  })
})

/** The sessions root of this invocation, refused when it is unusable (see {@link checkSessionsRoot}). */
export const location = Effect.gen(function*() {
  const root = yield* rootCommand
  yield* nonEmpty("--workspace", root.workspace)
  yield* nonEmpty("--sessions-dir", root.sessionsDir)
  const env = yield* Config.option(Config.String("LOGBOOK_SESSIONS_DIR")).pipe(
    Effect.orElseSucceed(() => Option.none<string>())
  )
  const workspace = resolve(Option.getOrElse(root.workspace, () => "."))
  const fromEnv = Option.filter(env, (dir) => dir.length > 0)
  const sessionsDir = Option.isSome(root.sessionsDir)
    ? absolutePath(root.sessionsDir.value)
    : Option.isSome(fromEnv)
    ? absolutePath(fromEnv.value)
    : defaultSessionsDir(workspace)
  const flags = [
    ...(Option.isSome(root.workspace) ? ["--workspace", root.workspace.value] : []),
    ...(Option.isSome(root.sessionsDir) ? ["--sessions-dir", root.sessionsDir.value] : [])
  ]
  yield* checkSessionsRoot(sessionsDir)
  return { workspace, sessionsDir, flags } satisfies Location
})

/**
 * How to invoke this CLI again in printed follow-up commands: `logbook` when it was run through
 * its bin link, else `node <path to bin.js>` (as `npm run demo` does).
 */
export const Invocation = Context.Reference<string>("@logbook/runtime/cli/Invocation", {
  defaultValue: () => "logbook"
})
