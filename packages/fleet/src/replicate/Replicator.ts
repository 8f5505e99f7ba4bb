/**
 * Replication of a session store into the fleet database (docs/fleet.md#replication). For each
 * session directory below a sessions root, the replicator tails `events.jsonl` from its cursor in
 * bounded batches of complete lines and, in ONE transaction per batch, upserts the session row and
 * its epoch, inserts the lines keyed by (session, epoch, byte offset) and advances the cursor — so
 * a crash or a cut connection at any instant leaves every acknowledged line in the fleet exactly
 * once. A line already stored with the same digest is skipped; a different digest is a
 * {@link ReplicationConflict}: reported, never overwritten, and that session stops there. A cap
 * rewrite (the log replaced by a suffix of itself, offsets restarting) is recognised through the
 * rewrite marker and the manifest's retained turn base and opens a new epoch of the session. The
 * session's other regular files are mirrored into `files`. The pieces: `internal/batches.ts`
 * (read and commit one batch), `internal/fileMirror.ts` (the other files), `ReplicationError.ts`;
 * this module is the session loop, the store loop and the `Replicator` service.
 *
 * **Gotchas:** the local store is the source of truth and is only read (no lock, no repair). An
 * unterminated last line is never taken: it waits for its newline. Lines evicted by a cap rewrite
 * before they were replicated are not in the fleet: the old epoch ends where replication stood.
 */
import { findSession, recentSessions } from "@logbook/projections"
import { pathsForDir, SessionFs } from "@logbook/store"
import { Context, Duration, Effect, Layer, Option, Ref, Schedule } from "effect"
import type { MigrationError } from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodePath from "node:path"
import { sqlDefectsAsFailures } from "../db/FleetDatabase.ts"
import { migrateFleet } from "../db/FleetMigrations.ts"
import { syncSearchDocuments } from "../memory/search/FleetSearch.ts"
import { MAX_BATCH_RETRIES, readCursor, replicateBatch } from "./internal/batches.ts"
import { directorySignature, syncFiles } from "./internal/fileMirror.ts"
import { ReplicationConflict, ReplicationGaveUp } from "./ReplicationError.ts"
import type { ReplicationError } from "./ReplicationError.ts"

/** Progress after each committed batch (for a progress line on stderr). */
export interface ReplicationProgress {
  readonly session: string
  readonly epoch: number
  /** The cursor: the next byte to replicate in this epoch's log. */
  readonly offset: number
  /** The log's length when the batch was read. */
  readonly size: number
  /** Lines inserted by this batch. */
  readonly lines: number
}

/** Options of {@link replicateStore} and {@link replicateSession}. */
export interface ReplicateOptions {
  /** The machine the sessions come from (`sessions.origin_host` of a new session). */
  readonly originHost: string
  /** At most this many bytes of log per batch (default 1 MiB; a longer single line is taken whole). */
  readonly maxBatchBytes?: number | undefined
  /** At most this many lines per batch (default 2 000, at most 6 000). */
  readonly maxBatchLines?: number | undefined
  /** Called after each committed batch. */
  readonly onProgress?: ((progress: ReplicationProgress) => Effect.Effect<void>) | undefined
  /** Called when a session stops on a conflict. */
  readonly onConflict?: ((conflict: ReplicationConflict) => Effect.Effect<void>) | undefined
  /**
   * Keep each replicated session's search documents current (`syncSearchDocuments`) after its
   * lines and files (default true; docs/fleet.md#search).
   */
  readonly searchDocuments?: boolean | undefined
  /** Replicate only this session (its id or directory name). */
  readonly session?: string | undefined
  /**
   * What earlier passes saw (the watch loop passes one; a single pass needs none): a session
   * whose files all have the size and mtime they had is skipped without a query, and an unchanged
   * file is not read again.
   */
  readonly memo?: ReplicationMemo | undefined
}

/** What passes remember between them: file signatures, and each session's signature and cursor. */
export interface ReplicationMemo {
  readonly files: Map<string, string>
  readonly sessions: Map<string, { readonly signature: string; readonly result: SessionReplication }>
}

/** An empty {@link ReplicationMemo}. */
export const makeReplicationMemo = (): ReplicationMemo => ({ files: new Map(), sessions: new Map() })

/** The outcome of replicating one session. */
export interface SessionReplication {
  readonly session: string
  /** The epoch and offset of the cursor afterwards. */
  readonly epoch: number
  readonly offset: number
  /** Lines inserted, and lines found already stored with the same digest. */
  readonly inserted: number
  readonly skipped: number
  readonly bytes: number
  /** Epochs opened by this run (the first sight of a session opens epoch 0). */
  readonly epochsStarted: number
  readonly filesWritten: number
  readonly filesRemoved: number
  readonly conflict: ReplicationConflict | undefined
}

/** The outcome of one pass over a sessions root. */
export interface ReplicationReport {
  readonly sessionsDir: string
  readonly sessions: ReadonlyArray<SessionReplication>
  readonly inserted: number
  readonly skipped: number
  readonly bytes: number
  readonly conflicts: ReadonlyArray<ReplicationConflict>
}

/**
 * Replicates one session directory (`dirName`, directly below `sessionsDir`) until its cursor
 * reaches the end of the complete lines, then mirrors its other files. Stops at a conflict
 * (reported through `onConflict` and in the result; the files are then not mirrored).
 * A directory without a readable manifest is not (yet) a session: nothing is written.
 */
export const replicateSession = Effect.fn("Replicator.replicateSession")(
  function*(sessionsDir: string, dirName: string, options: ReplicateOptions) {
    const sql = yield* SqlClient.SqlClient
    const fs = yield* SessionFs
    const paths = pathsForDir(sessionsDir, dirName)
    const memo = options.memo
    const signature = memo === undefined ? "" : yield* directorySignature(fs, paths.dir)
    const remembered = memo?.sessions.get(dirName)
    if (remembered !== undefined && remembered.signature === signature) {
      return {
        ...remembered.result,
        inserted: 0,
        skipped: 0,
        bytes: 0,
        epochsStarted: 0,
        filesWritten: 0,
        filesRemoved: 0
      }
    }
    let epoch = 0
    let offset = 0
    let inserted = 0
    let skipped = 0
    let bytes = 0
    let epochsStarted = 0
    let retries = 0
    let conflict: ReplicationConflict | undefined
    for (;;) {
      const outcome = yield* replicateBatch(sql, fs, paths, dirName, options)
      if (outcome._tag === "CaughtUp") break
      if (outcome._tag === "Retry") {
        retries++
        if (retries >= MAX_BATCH_RETRIES) {
          return yield* new ReplicationGaveUp({ session: dirName, attempts: retries, reason: outcome.reason })
        }
        continue
      }
      retries = 0
      epoch = outcome.epoch
      offset = outcome.offset
      inserted += outcome.inserted
      skipped += outcome.skipped
      bytes += outcome.bytes
      if (outcome.newEpoch) epochsStarted++
      if (options.onProgress !== undefined) {
        yield* options.onProgress({ session: dirName, epoch, offset, size: outcome.size, lines: outcome.inserted })
      }
      if (outcome.conflict !== undefined) {
        conflict = outcome.conflict
        break
      }
    }
    if (conflict !== undefined && options.onConflict !== undefined) yield* options.onConflict(conflict)
    // A session that moved while it was replicated is looked at again by the next pass.
    const settled = memo === undefined ? "" : yield* directorySignature(fs, paths.dir)
    const cursor = yield* readCursor(sql, dirName)
    if (Option.isSome(cursor)) {
      epoch = cursor.value.epoch
      offset = cursor.value.offset
    }
    const files = conflict === undefined && Option.isSome(cursor)
      ? yield* syncFiles(sql, fs, paths, dirName, memo?.files)
      : { written: 0, removed: 0 }
    // Search documents follow the memory view and the log (nothing is written when unchanged).
    if (conflict === undefined && Option.isSome(cursor) && options.searchDocuments !== false) {
      yield* syncSearchDocuments(sessionsDir, dirName)
    }
    const result: SessionReplication = {
      session: dirName,
      epoch,
      offset,
      inserted,
      skipped,
      bytes,
      epochsStarted,
      filesWritten: files.written,
      filesRemoved: files.removed,
      conflict
    }
    if (memo !== undefined) {
      if (settled === signature && Option.isSome(cursor)) memo.sessions.set(dirName, { signature, result })
      else memo.sessions.delete(dirName)
    }
    return result
  }
)

/**
 * One pass over a sessions root: every session (as `recentSessions` lists them, or the one
 * `options.session` names, found with `findSession`) replicated up to its last complete line.
 * A conflict stops only its own session; the pass goes on and reports it.
 */
export const replicateStore = Effect.fn("Replicator.replicateStore")(
  function*(sessionsDir: string, options: ReplicateOptions) {
    const names: Array<string> = []
    if (options.session !== undefined) {
      const paths = yield* findSession(sessionsDir, options.session)
      names.push(NodePath.basename(paths.dir))
    } else {
      const listing = yield* recentSessions(sessionsDir)
      for (const s of listing.sessions) names.push(s.id)
    }
    const sessions: Array<SessionReplication> = []
    for (const name of names) {
      sessions.push(yield* sqlDefectsAsFailures(replicateSession(sessionsDir, name, options)))
    }
    return {
      sessionsDir: NodePath.resolve(sessionsDir),
      sessions,
      inserted: sessions.reduce((n, s) => n + s.inserted, 0),
      skipped: sessions.reduce((n, s) => n + s.skipped, 0),
      bytes: sessions.reduce((n, s) => n + s.bytes, 0),
      conflicts: sessions.flatMap((s) => s.conflict === undefined ? [] : [s.conflict])
    } satisfies ReplicationReport
  }
)

/** Whether a failure is worth retrying: a database error the driver marks retryable (a lost connection). */
export const isRetryableReplicationError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError" &&
  "isRetryable" in error && error.isRetryable === true

/** The backoff between attempts after a lost connection: exponential from 100 ms, capped at 5 s. */
export const replicationRetrySchedule: Schedule.Schedule<Duration.Duration> = Schedule.exponential("100 millis").pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(5))))
)

/** Options of the {@link Replicator} layer: those of a pass plus the watch interval. */
export interface ReplicatorOptions extends ReplicateOptions {
  readonly sessionsDir: string
  /** Pause between passes (default 1 second). */
  readonly interval?: Duration.Input | undefined
  /** Called when a pass fails (after which the next pass is retried with backoff). */
  readonly onError?: ((error: ReplicationError | MigrationError) => Effect.Effect<void>) | undefined
}

/**
 * The replicator a host runs beside `SessionMemory`: while its layer lives, a scoped fiber runs the
 * fleet migrations once, then replicates the sessions root pass after pass (`interval` apart),
 * retrying with backoff when the database is unreachable. `runOnce` runs a pass now; `lastReport` is the latest finished pass.
 *
 * **Gotchas:** the fiber is interrupted when the layer's scope closes; an interrupted batch rolls
 * back and is replicated again by the next run.
 */
export class Replicator extends Context.Service<Replicator, {
  readonly runOnce: Effect.Effect<ReplicationReport, ReplicationError>
  readonly lastReport: Effect.Effect<Option.Option<ReplicationReport>>
}>()("@logbook/fleet/Replicator") {
  /** Starts the watch fiber; needs the fleet client (`layerFleetClient`) and `SessionFs`. */
  static readonly layer = (
    options: ReplicatorOptions
  ): Layer.Layer<Replicator, never, SqlClient.SqlClient | SessionFs> =>
    Layer.effect(
      Replicator,
      Effect.gen(function*() {
        const context = yield* Effect.context<SqlClient.SqlClient | SessionFs>()
        const last = yield* Ref.make(Option.none<ReplicationReport>())
        const memo = options.memo ?? makeReplicationMemo()
        const runOnce = replicateStore(options.sessionsDir, { ...options, memo }).pipe(
          Effect.tap((report) => Ref.set(last, Option.some(report))),
          Effect.provideContext(context)
        )
        // The fleet's schema is brought up to date once, before the first pass.
        const migrated = yield* Ref.make(false)
        const migrateOnce = Effect.gen(function*() {
          if (yield* Ref.get(migrated)) return
          yield* migrateFleet.pipe(Effect.provideContext(context))
          yield* Ref.set(migrated, true)
        })
        const pass = Effect.andThen(migrateOnce, runOnce).pipe(
          Effect.tapError((e) => options.onError === undefined ? Effect.void : options.onError(e)),
          Effect.retry({ schedule: replicationRetrySchedule })
        )
        yield* pass.pipe(
          Effect.repeat(Schedule.spaced(options.interval ?? Duration.seconds(1))),
          Effect.forkScoped
        )
        return Replicator.of({ runOnce, lastReport: Ref.get(last) })
      })
    )
}
