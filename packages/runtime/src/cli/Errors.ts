/**
 * Every error class of the CLI's own, and its exit codes: a leaf module (it imports no command),
 * so any command can fail with these without a cycle through the command tree. How each error is
 * shown is `ErrorRendering.ts`.
 */
import { Schema } from "effect"

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

/** `pack verify` found differences, a wrong digest or a wrong or missing signature (the report is printed). */
export class PackNotVerified extends Schema.TaggedError<PackNotVerified>()("PackNotVerified", {
  session: Schema.String,
  pack: Schema.String,
  count: Schema.Number
}) {
  override get message(): string {
    return `session ${this.session} does not match the audit pack ${this.pack}: ${this.count} problem(s)`
  }
}

/**
 * The session's matrix checkpoints do not replay (undecodable checkpoint, changed spec, stale
 * revision or a broken invariant): no matrix state can be trusted, so a host keeps admission
 * closed. Exit 5, like any integrity problem.
 */
export class MatrixReplayFailed extends Schema.TaggedError<MatrixReplayFailed>()("MatrixReplayFailed", {
  session: Schema.String,
  reason: Schema.String,
  hint: Schema.String
}) {
  override get message(): string {
    return `session ${this.session}: matrix replay failed, so every matrix stays closed: ${this.reason}`
  }
}

/** Some sessions stopped on a conflicting line (each was reported on stderr); exit 5. */
export class ReplicationConflicts extends Schema.TaggedError<ReplicationConflicts>()("ReplicationConflicts", {
  count: Schema.Number,
  sessions: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `${this.count} session(s) stopped on a line that differs from the one the fleet holds: ${
      this.sessions.join(", ")
    }`
  }
}
