/**
 * Errors of the event log that are not plain I/O failures: unknown or evicted turns, a
 * session locked by another process, and untrusted input that is not a valid ThreadEvent.
 * All are `Schema.TaggedError`s so the CLI can print them and hosts can match on `_tag`.
 */
import { Schema } from "effect"

/** `reconstructTurn(n)` for a turn number that was never recorded in this session. */
export class TurnNotFound extends Schema.TaggedError<TurnNotFound>()("TurnNotFound", {
  session: Schema.String,
  turn: Schema.Number
}) {
  override get message(): string {
    return `turn ${this.turn} not found in session ${this.session}`
  }
}

/** `reconstructTurn(n)` for a turn that existed but was removed by cap eviction (n < retained_turn_base). */
export class TurnEvicted extends Schema.TaggedError<TurnEvicted>()("TurnEvicted", {
  session: Schema.String,
  turn: Schema.Number,
  retainedTurnBase: Schema.Number
}) {
  override get message(): string {
    return `turn ${this.turn} of session ${this.session} was evicted by the event cap; ` +
      `the oldest retained turn is ${this.retainedTurnBase} (see derived/eviction-summary-*.json for what it held)`
  }
}

/** `open` with `requireExclusive: true` while another process holds `session.lock`. */
export class SessionLocked extends Schema.TaggedError<SessionLocked>()("SessionLocked", {
  session: Schema.String,
  path: Schema.String
}) {
  override get message(): string {
    return `session ${this.session} is open in another process (lock held on ${this.path}); ` +
      `close that process or open without requireExclusive to read it`
  }
}

/** Input handed to `appendUnknown` (or an event that cannot be serialised) is not a valid ThreadEvent. */
export class InvalidEvent extends Schema.TaggedError<InvalidEvent>()("InvalidEvent", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `invalid event (${this.operation}): ${this.detail}`
  }
}
