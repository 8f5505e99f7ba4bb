/**
 * The CLI's own errors and the one place where every error becomes an exit code and a message
 * that says what was wrong and what to do. Expected errors are printed as one line, never as a
 * stack trace; only defects (bugs) print their cause.
 */
import { Cause, Schema } from "effect"
import { CliError } from "effect/cli"

/** The exit codes of `logbook` (also listed in `logbook --help`). */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  evicted: 4,
  integrity: 5
} as const

/** An `append` input line that is not a ThreadEvent; every earlier line was appended and flushed. */
export class InvalidInputLine extends Schema.TaggedError<InvalidInputLine>()("InvalidInputLine", {
  session: Schema.String,
  line: Schema.Number,
  reason: Schema.String,
  appended: Schema.Number
}) {
  override get message(): string {
    return `line ${this.line} of the input is not a ThreadEvent: ${this.reason}`
  }
}

/** `verify` found problems (the report is already printed). */
export class IntegrityProblems extends Schema.TaggedError<IntegrityProblems>()("IntegrityProblems", {
  session: Schema.String,
  count: Schema.Number
}) {
  override get message(): string {
    return `session ${this.session}: ${this.count} integrity problem(s) found`
  }
}

/** Arguments that parse but make no sense together (exit 2). */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  detail: Schema.String,
  hint: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

/** A command could not do what it was asked for a reason the user can fix (exit 1). */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  detail: Schema.String,
  hint: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
    ? error._tag
    : undefined

const field = (error: unknown, name: string): string => {
  if (typeof error !== "object" || error === null || !(name in error)) return ""
  const value: unknown = Reflect.get(error, name)
  return typeof value === "string" || typeof value === "number" ? String(value) : ""
}

/**
 * The exit code for a failure: usage errors 2, unknown session or turn 3, evicted turn 4,
 * integrity problems (verify findings, a matrix history that does not replay) 5, everything
 * else 1. Help shown without errors is 0.
 */
export const exitCodeOf = (error: unknown): number => {
  if (CliError.isCliError(error)) {
    return error._tag === "ShowHelp" && error.errors.length === 0 ? ExitCode.ok : ExitCode.usage
  }
  switch (tagOf(error)) {
    case "UsageError":
      return ExitCode.usage
    case "SessionNotFound":
    case "TurnNotFound":
      return ExitCode.notFound
    case "TurnEvicted":
      return ExitCode.evicted
    case "IntegrityProblems":
    case "MatrixReplayFailed":
    case "CorruptFile":
      return ExitCode.integrity
    default:
      return ExitCode.failure
  }
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
    default:
      return "retry; if it keeps failing, check the disk and run `logbook verify <session>`"
  }
}

/**
 * The message for an expected error: what was wrong, then what to do, on one line. `undefined`
 * for errors that are not expected (the caller prints the cause as a defect).
 */
export const describeError = (error: unknown): string | undefined => {
  const message = error instanceof Error ? error.message : ""
  switch (tagOf(error)) {
    case "SessionNotFound":
      return `${message}; list sessions with \`logbook sessions\` (or point --workspace / --sessions-dir at another store)`
    case "TurnNotFound":
      return `${message}; \`logbook show ${field(error, "session")}\` lists the retained turns`
    case "TurnEvicted":
      return `${message}; \`logbook show ${field(error, "session")}\` lists the retained turns`
    case "StoreIoError":
    case "CreateDirError":
      return `${message}; ${ioHint(field(error, "code"), field(error, "path"))}`
    case "SessionLocked":
      return `${message.split(";")[0]}; wait for that process to finish (or stop it) and retry`
    case "InvalidInputLine": {
      const appended = Number(field(error, "appended"))
      const line = Number(field(error, "line"))
      const before = line > 1
        ? `lines 1-${line - 1} were appended and flushed (${appended} events)`
        : "nothing was appended"
      return `${message}; ${before}, nothing after line ${line} was read — fix that line and pipe it and the rest again`
    }
    case "InvalidEvent":
      return `${message}; expected a ThreadEvent (docs/format.md#thread-event) as one JSON object per line`
    case "SummaryHookFailed":
      return `${message}; the events were kept — check that the session's derived/ directory is writable`
    case "IntegrityProblems":
      return `${message}; opening the session for writing (e.g. \`logbook append ${
        field(error, "session")
      } < /dev/null\`) rebuilds the metadata and terminates a torn tail — malformed lines stay in the log and are skipped`
    case "PlatformError":
      return `${message}; check that the input and output streams are open`
    case "CorruptFile":
      return message
    default:
      // The CLI's own errors (UsageError, CommandFailed, MatrixReplayFailed, …) carry their hint.
      return field(error, "hint") === "" ? undefined : `${message}; ${field(error, "hint")}`
  }
}

/**
 * One line (or a defect report) for a failure cause: the expected error's message and hint, or
 * the pretty cause of an unexpected one. CLI parse errors were already shown with the usage.
 */
export const renderCause = (cause: Cause.Cause<unknown>): string | undefined => {
  const error = Cause.squash(cause)
  if (CliError.isCliError(error)) return undefined
  const described = describeError(error)
  if (described !== undefined) return `logbook: ${described}`
  return `logbook: unexpected error (a bug; please report it with the command you ran):\n${Cause.pretty(cause)}`
}
