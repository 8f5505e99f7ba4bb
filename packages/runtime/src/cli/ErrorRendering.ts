/**
 * The one place where every error becomes an exit code and a message that says what was wrong
 * and what to do. The messages are an exhaustive `Match` over {@link LogbookFailure}, the union of
 * every error a command can fail with, and `Cli.ts` checks at compile time that the command
 * tree's failures are in that union — so a command that gains a new error does not compile until
 * the error has its line and exit code here. Expected errors are printed as one line, never as a
 * stack trace; only defects (bugs) print their cause.
 */
import type { InvalidPack } from "@logbook/domain"
import type {
  FleetDatabaseMissing,
  FleetDataInvalid,
  FleetError,
  FleetPackMissing,
  FleetRestoreTargetExists,
  FleetSessionNotFound,
  InvalidFleetDatabaseUrl,
  ReplicationGaveUp
} from "@logbook/fleet"
import type {
  EvidenceForeignSession,
  EvidenceUnavailable,
  InvalidEvidencePage,
  InvalidSigningKey,
  SessionNotFound
} from "@logbook/projections"
import type {
  CorruptFile,
  CreateDirError,
  InvalidEvent,
  SessionLocked,
  StoreIoError,
  SummaryHookFailed,
  TurnEvicted,
  TurnNotFound
} from "@logbook/store"
import type { PlatformError } from "effect"
import { Cause, Match, Result } from "effect"
import { CliError } from "effect/cli"
import type {
  CommandFailed,
  IntegrityProblems,
  InvalidInputLine,
  MatrixReplayFailed,
  PackNotVerified,
  ReplicationConflicts,
  UsageError
} from "./Errors.ts"
import { ExitCode } from "./Errors.ts"

/**
 * Every error a `logbook` command can fail with. `Cli.ts` asserts that the command tree's error
 * type is assignable to it, so this list cannot fall behind the commands.
 */
export type LogbookFailure =
  | SessionNotFound
  | TurnNotFound
  | TurnEvicted
  | StoreIoError
  | CreateDirError
  | SessionLocked
  | InvalidInputLine
  | InvalidEvent
  | SummaryHookFailed
  | IntegrityProblems
  | MatrixReplayFailed
  | CorruptFile
  | CommandFailed
  | PlatformError.PlatformError
  | InvalidPack
  | PackNotVerified
  | InvalidSigningKey
  | UsageError
  | EvidenceUnavailable
  | EvidenceForeignSession
  | InvalidEvidencePage
  | FleetError
  | FleetDatabaseMissing
  | InvalidFleetDatabaseUrl
  | ReplicationConflicts
  | ReplicationGaveUp
  | FleetSessionNotFound
  | FleetDataInvalid
  | FleetRestoreTargetExists
  | FleetPackMissing

/** How one expected failure is shown: a line saying what was wrong and what to do, and the exit code. */
export interface RenderedFailure {
  readonly line: string
  readonly exitCode: number
}

const ioHint = (code: string, path: string): string => {
  switch (code) {
    case "ELOOP":
      return `a symbolic link was found at ${path}; the store never follows links — replace it with the real file or directory`
    case "EACCES":
    case "EPERM":
      return `check the permissions of ${path} (the store uses 0700 directories and 0600 files owned by its user)`
    case "ENOSPC":
      return "the disk is full; free some space and retry (events acknowledged by a completed flush are safe)"
    case "ENOENT":
    case "ENOTDIR":
      return "check --workspace / --sessions-dir (or LOGBOOK_SESSIONS_DIR)"
    case "ENAMETOOLONG":
      return "a name in that path is longer than the file system allows (usually 255 bytes): " +
        "use a shorter session id or a shorter --sessions-dir"
    default:
      return "retry; if it keeps failing, check the disk and run `logbook verify <session>`"
  }
}

const retainedTurnsHint = (session: string): string => `\`logbook show ${session}\` lists the retained turns`

const rendered = (exitCode: number, what: string, todo?: string): RenderedFailure => ({
  line: todo === undefined ? what : `${what}; ${todo}`,
  exitCode
})

/**
 * The line and exit code of every expected failure: not found 3, evicted 4, integrity problems
 * (verify findings, a matrix history that does not replay, a corrupt goal or progress file) 5,
 * everything else 1.
 */
export const renderFailure: (error: LogbookFailure) => RenderedFailure = Match.type<LogbookFailure>().pipe(
  Match.tagsExhaustive({
    SessionNotFound: (e) =>
      rendered(
        ExitCode.notFound,
        e.message,
        "list sessions with `logbook sessions` (or point --workspace / --sessions-dir at another store)"
      ),
    TurnNotFound: (e) => rendered(ExitCode.notFound, e.message, retainedTurnsHint(e.session)),
    TurnEvicted: (e) => rendered(ExitCode.evicted, e.message, retainedTurnsHint(e.session)),
    StoreIoError: (e) => rendered(ExitCode.failure, e.message, ioHint(e.code, e.path)),
    CreateDirError: (e) => rendered(ExitCode.failure, e.message, ioHint(e.code, e.path)),
    SessionLocked: (e) =>
      rendered(
        ExitCode.failure,
        `session ${e.session} is open in another process (lock held on ${e.path})`,
        "wait for that process to finish (or stop it) and retry"
      ),
    InvalidInputLine: (e) =>
      rendered(
        ExitCode.failure,
        e.message,
        `${
          e.line > 1 ? `lines 1-${e.line - 1} were appended and flushed (${e.appended} events)` : "nothing was appended"
        }, nothing after line ${e.line} was read — fix that line and pipe it and the rest again`
      ),
    InvalidEvent: (e) =>
      rendered(
        ExitCode.failure,
        e.message,
        "expected a ThreadEvent (see docs/format.md in the Logbook repository) as one JSON object per line"
      ),
    SummaryHookFailed: (e) =>
      rendered(
        ExitCode.failure,
        e.message,
        "the events were kept — check that the session's derived/ directory is writable"
      ),
    IntegrityProblems: (e) =>
      rendered(
        ExitCode.integrity,
        e.message,
        `opening the session for writing (e.g. \`logbook append ${e.session} < /dev/null\`) rebuilds the metadata and ` +
          "terminates a torn tail — malformed lines stay in the log and are skipped"
      ),
    MatrixReplayFailed: (e) => rendered(ExitCode.integrity, e.message, e.hint),
    // The message already says what to do (move the file aside or restore it).
    CorruptFile: (e) => rendered(ExitCode.integrity, e.message),
    CommandFailed: (e) => rendered(ExitCode.failure, e.detail, e.hint),
    PlatformError: (e) => rendered(ExitCode.failure, e.message, "check that the input and output streams are open"),
    InvalidPack: (e) =>
      rendered(
        ExitCode.evicted,
        e.message,
        "the pack cannot be trusted to describe anything; create a new one with `logbook pack create`"
      ),
    PackNotVerified: (e) => rendered(ExitCode.integrity, e.message),
    InvalidSigningKey: (e) =>
      rendered(
        ExitCode.failure,
        e.message,
        "use the .key file to sign and the .pub file to verify (`logbook pack keygen`)"
      ),
    UsageError: (e) => rendered(ExitCode.usage, e.detail, e.hint),
    EvidenceUnavailable: (e) =>
      rendered(
        ExitCode.notFound,
        e.message,
        `links from an older explanation expire when the log changes; run \`logbook explain ${e.session}\` again for current ones`
      ),
    EvidenceForeignSession: (e) =>
      rendered(ExitCode.failure, e.message, "pass the session the evidence link names (logbook-evidence:<session>:…)"),
    InvalidEvidencePage: (e) => rendered(ExitCode.usage, e.message, "use 0 or the next offset a previous page printed"),
    FleetError: (e) =>
      rendered(
        ExitCode.failure,
        `fleet database ${e.target}: ${e.operation} failed: ${e.message}`,
        "check that the server is reachable and that the user may use the fleet's tables " +
          "(`logbook replicate` creates them and retries a lost connection with backoff)"
      ),
    FleetDatabaseMissing: (e) =>
      rendered(
        ExitCode.usage,
        `${e.operation}: no fleet database given`,
        "pass --db postgres://user@host:port/database (replicate also takes --to), or set LOGBOOK_DATABASE_URL"
      ),
    InvalidFleetDatabaseUrl: (e) =>
      rendered(
        ExitCode.usage,
        `${e.operation}: the fleet database URL is not usable: ${e.reason}`,
        "use postgres://user@host:port/database (the URL itself is never printed)"
      ),
    ReplicationConflicts: (e) =>
      rendered(
        ExitCode.integrity,
        e.message,
        "the fleet kept its lines; compare the session with the machine it came from (see docs/fleet.md#conflicts)"
      ),
    ReplicationGaveUp: (e) =>
      rendered(
        ExitCode.failure,
        e.message,
        "stop any other replicator of this store (or wait for the session to stop being rewritten) and run `logbook replicate` again"
      ),
    FleetSessionNotFound: (e) =>
      rendered(ExitCode.notFound, e.message, "list the fleet's sessions with `logbook fleet sessions`"),
    FleetDataInvalid: (e) =>
      rendered(
        ExitCode.integrity,
        e.message,
        "nothing was written; replicate the session again from its origin machine if it still exists"
      ),
    FleetRestoreTargetExists: (e) =>
      rendered(
        ExitCode.failure,
        e.message,
        "restore into another store with --sessions-dir, or move the existing session aside first"
      ),
    FleetPackMissing: (e) =>
      rendered(
        ExitCode.failure,
        e.message,
        `create one on the origin machine (\`logbook pack create ${e.session}\`) and replicate again`
      )
  })
)

/** The exit code of a parse error or help request: 0 for help shown on request, else 2. */
const cliErrorExitCode = (error: CliError.CliError): number =>
  error._tag === "ShowHelp" && error.errors.length === 0 ? ExitCode.ok : ExitCode.usage

/**
 * The exit code for a failure of the command tree, or for a parse error / help request from
 * `effect/cli` (usage 2; help shown on request 0).
 */
export const exitCodeOf = (error: LogbookFailure | CliError.CliError): number =>
  CliError.isCliError(error) ? cliErrorExitCode(error) : renderFailure(error).exitCode

/**
 * What to print and which code to exit with for a failure cause: the expected error's line (none
 * for CLI parse errors, already shown with the usage), or the pretty cause of a defect (exit 1).
 */
export const renderCause = (
  cause: Cause.Cause<LogbookFailure | CliError.CliError>
): { readonly text: string | undefined; readonly exitCode: number } => {
  const found = Cause.findError(cause)
  if (Result.isFailure(found)) {
    return {
      text: `logbook: unexpected error (a bug; please report it with the command you ran):\n${Cause.pretty(cause)}`,
      exitCode: ExitCode.failure
    }
  }
  const error = found.success
  if (CliError.isCliError(error)) return { text: undefined, exitCode: cliErrorExitCode(error) }
  const { exitCode, line } = renderFailure(error)
  return { text: `logbook: ${line}`, exitCode }
}
