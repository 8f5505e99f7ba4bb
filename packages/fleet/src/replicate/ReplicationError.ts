/**
 * What replication fails or stops with: a line that differs from the fleet's copy (reported, never
 * overwritten), a session whose batches keep starting over, and the union of its failures.
 */
import type { SessionNotFound } from "@logbook/projections"
import type { StoreIoError } from "@logbook/store"
import { Schema } from "effect"
import type { SqlError } from "effect/sql/SqlError"

/**
 * A line of the local log whose digest differs from the line the fleet already holds at the same
 * (session, epoch, byte offset). The stored row is left as it is; replication of the session
 * stops before the line.
 */
export class ReplicationConflict extends Schema.TaggedError<ReplicationConflict>()("ReplicationConflict", {
  session: Schema.String,
  epoch: Schema.Number,
  offset: Schema.Number,
  storedSha256: Schema.String,
  localSha256: Schema.String
}) {
  override get message(): string {
    return `replication conflict in session ${this.session}, epoch ${this.epoch}, at byte ${this.offset}: ` +
      `the fleet holds a line with SHA-256 ${this.storedSha256}, the local log has ${this.localSha256}; ` +
      "the stored line is kept and the session is not replicated further"
  }
}

/**
 * A session whose batches kept having to start over (another replicator moving the cursor, or the
 * log being rewritten under every read) {@link MAX_BATCH_RETRIES} times in a row: replication of
 * the session gives up instead of reporting it caught up; `reason` is the last cause.
 */
export class ReplicationGaveUp extends Schema.TaggedError<ReplicationGaveUp>()("ReplicationGaveUp", {
  session: Schema.String,
  attempts: Schema.Number,
  reason: Schema.String
}) {
  override get message(): string {
    return `replication of session ${this.session} gave up after ${this.attempts} attempts: ${this.reason}`
  }
}

/**
 * What replication can fail with: reading the store, the database (a lost connection is
 * retryable), or a session that never settled.
 */
export type ReplicationError = StoreIoError | SqlError | SessionNotFound | ReplicationGaveUp
