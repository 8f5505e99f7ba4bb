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
 * session's other regular files are mirrored into `files`.
 *
 * **Gotchas:** the local store is the source of truth and is only read (no lock, no repair). An
 * unterminated last line is never taken: it waits for its newline. Lines evicted by a cap rewrite
 * before they were replicated are not in the fleet: the old epoch ends where replication stood.
 */
import type { Manifest } from "@logbook/domain"
import { encodeManifest, matchingMarker, parseRfc3339 } from "@logbook/domain"
import type { SessionNotFound } from "@logbook/projections"
import { findSession, listSessionFiles, recentSessions } from "@logbook/projections"
import type { SessionFsApi, SessionPaths, StoreIoError } from "@logbook/store"
import { fileSignature, loadManifest, loadMarker, pathsForDir, SessionFs, sha256Hex } from "@logbook/store"
import { Context, Duration, Effect, Layer, Option, Ref, Schedule, Schema } from "effect"
import type { MigrationError } from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as NodePath from "node:path"
import { sqlDefectsAsFailures } from "../db/FleetDatabase.ts"
import { migrateFleet } from "../db/FleetMigrations.ts"
import { syncSearchDocuments } from "../memory/search/FleetSearch.ts"
import type { EventRow, TurnState } from "./internal/lineRows.ts"
import { initialTurnState, lineRow } from "./internal/lineRows.ts"

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

const DEFAULT_BATCH_BYTES = 1024 * 1024
const DEFAULT_BATCH_LINES = 2000
// Ten parameters per row; PostgreSQL admits 65 535 per statement.
const MAX_BATCH_LINES = 6000
/** Batches of one session that may start over in a row before {@link ReplicationGaveUp}. */
export const MAX_BATCH_RETRIES = 1000

/** What the local files say about a session's log: its length, the retained turn base and the manifest. */
interface LocalState {
  readonly size: number
  readonly base: number
  readonly manifest: Manifest
}

/**
 * Reads the marker, then the log's length, then the manifest — in that order, so that once a cap
 * rewrite has replaced the log, every later read sees the new base: from step 5 to step 8 of the
 * rewrite the marker matches the new length, and it is deleted only after the manifest carries
 * the new base.
 */
const readLocalState = (fs: SessionFsApi, paths: SessionPaths) =>
  Effect.gen(function*() {
    const marker = yield* loadMarker(paths.marker)
    const info = yield* fs.lstat(paths.events)
    const size = Option.isSome(info) && info.value.type === "File" ? info.value.size : 0
    const manifest = yield* loadManifest(paths.manifest)
    if (Option.isNone(manifest)) return Option.none<LocalState>()
    const matching = matchingMarker(Option.getOrUndefined(marker), size)
    const base = matching !== undefined
      ? Math.max(matching.retained_turn_base, 1)
      : Math.max(manifest.value.retained_turn_base ?? 1, 1)
    return Option.some<LocalState>({ size, base, manifest: manifest.value })
  })

/** The fleet's cursor of a session, with the base of its epoch. */
interface StoredCursor {
  readonly epoch: number
  readonly offset: number
  readonly turns: TurnState
  readonly base: number
}

const readCursor = (sql: SqlClient.SqlClient, session: string) =>
  Effect.map(
    sql<{
      readonly epoch: number
      readonly byte_offset: bigint | number
      readonly turn_count: bigint | number
      readonly open_turn: bigint | number | null
      readonly base: bigint | number | null
    }>`
      select c.epoch, c.byte_offset, c.turn_count, c.open_turn, e.retained_turn_base as base
      from replication_cursors c
      left join session_epochs e on e.session_id = c.session_id and e.epoch = c.epoch
      where c.session_id = ${session}`,
    (rows) => {
      const row = rows[0]
      if (row === undefined) return Option.none<StoredCursor>()
      return Option.some<StoredCursor>({
        epoch: Number(row.epoch),
        offset: Number(row.byte_offset),
        turns: {
          turnCount: Number(row.turn_count),
          openTurn: row.open_turn === null ? undefined : Number(row.open_turn)
        },
        base: row.base === null ? 1 : Number(row.base)
      })
    }
  )

/** Complete lines of `[start, size)`, at most `maxBytes` (widened for one longer line) and `maxLines`. */
const readBatch = (
  fs: SessionFsApi,
  path: string,
  start: number,
  size: number,
  maxBytes: number,
  maxLines: number
) =>
  Effect.gen(function*() {
    let window = maxBytes
    while (start < size) {
      const end = Math.min(size, start + window)
      const bytes = yield* fs.readRange(path, start, end)
      const lines: Array<{ readonly offset: number; readonly bytes: Uint8Array }> = []
      let at = 0
      let nl = bytes.indexOf(10, at)
      while (nl !== -1 && lines.length < maxLines) {
        lines.push({ offset: start + at, bytes: bytes.subarray(at, nl + 1) })
        at = nl + 1
        nl = bytes.indexOf(10, at)
      }
      if (lines.length > 0 || end >= size) return lines
      // The first line is longer than the window: widen it until the line ends (or the file does).
      window *= 2
    }
    return []
  })

const timestampOrNull = (text: string): string | null => parseRfc3339(text) === undefined ? null : text

/** The target of one batch: where it writes and what the cursor must still say when it commits. */
interface BatchTarget {
  readonly epoch: number
  readonly offset: number
  readonly turns: TurnState
  readonly base: number
  readonly newEpoch: boolean
  readonly expect: StoredCursor | undefined
}

type BatchOutcome =
  | { readonly _tag: "CaughtUp" }
  | { readonly _tag: "Retry"; readonly reason: string }
  | {
    readonly _tag: "Committed"
    readonly epoch: number
    readonly offset: number
    readonly inserted: number
    readonly skipped: number
    readonly bytes: number
    readonly newEpoch: boolean
    readonly size: number
    readonly conflict: ReplicationConflict | undefined
  }

const commitBatch = (
  sql: SqlClient.SqlClient,
  session: string,
  options: ReplicateOptions,
  local: LocalState,
  target: BatchTarget,
  rows: ReadonlyArray<EventRow>,
  turnsAfter: ReadonlyArray<TurnState>
) =>
  Effect.gen(function*() {
    const m = local.manifest
    yield* sql`
      insert into sessions (session_id, origin_host, manifest, status, created_at, updated_at)
      values (${session}, ${options.originHost}, ${encodeManifest(m)}, ${m.status},
              ${timestampOrNull(m.created_at)}, ${timestampOrNull(m.updated_at)})
      on conflict (session_id) do update set
        manifest = excluded.manifest, status = excluded.status, created_at = excluded.created_at,
        updated_at = excluded.updated_at, last_replicated_at = now()`
    // The cursor row is the lock that serialises replicators of one session.
    if (target.expect === undefined) {
      const created = yield* sql`
        insert into replication_cursors (session_id, epoch, byte_offset, turn_count)
        values (${session}, ${target.epoch}, 0, ${target.turns.turnCount})
        on conflict (session_id) do nothing
        returning session_id`
      if (created.length === 0) {
        return { _tag: "Retry", reason: "another replicator created the session's cursor meanwhile" } as const
      }
    } else {
      const current = yield* sql<{ readonly epoch: number; readonly byte_offset: bigint | number }>`
        select epoch, byte_offset from replication_cursors where session_id = ${session} for update`
      const row = current[0]
      if (row === undefined || row.epoch !== target.expect.epoch || Number(row.byte_offset) !== target.expect.offset) {
        return { _tag: "Retry", reason: "another replicator moved the session's cursor meanwhile" } as const
      }
    }
    if (target.newEpoch) {
      yield* sql`
        insert into session_epochs (session_id, epoch, retained_turn_base)
        values (${session}, ${target.epoch}, ${target.base})
        on conflict (session_id, epoch) do nothing`
      yield* sql`update sessions set current_epoch = ${target.epoch} where session_id = ${session}`
    }
    const first = rows[0]
    const last = rows.at(-1)
    let accepted = rows.length
    let skipped = 0
    let conflict: ReplicationConflict | undefined
    const fresh: Array<EventRow> = []
    if (first !== undefined && last !== undefined) {
      if (first.byte_offset === 0) {
        yield* sql`
          update session_epochs set first_line_sha256 = ${first.sha256}
          where session_id = ${session} and epoch = ${target.epoch} and first_line_sha256 is null`
      }
      const existing = yield* sql<{ readonly byte_offset: bigint | number; readonly sha256: string }>`
        select byte_offset, sha256 from events
        where session_id = ${session} and epoch = ${target.epoch}
          and byte_offset >= ${first.byte_offset} and byte_offset <= ${last.byte_offset + last.length}
        order by byte_offset`
      const stored = new Map(existing.map((r) => [Number(r.byte_offset), r.sha256] as const))
      const storedOffsets = existing.map((r) => Number(r.byte_offset))
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]
        if (row === undefined) break
        const sha = stored.get(row.byte_offset)
        // A stored line starting inside this one is a disagreement about where lines are.
        const inside = storedOffsets.find((o) => o > row.byte_offset && o <= row.byte_offset + row.length)
        if (sha === row.sha256 && inside === undefined) {
          skipped++
          continue
        }
        if (sha !== undefined || inside !== undefined) {
          accepted = i
          conflict = new ReplicationConflict({
            session,
            epoch: target.epoch,
            offset: sha !== undefined ? row.byte_offset : inside ?? row.byte_offset,
            storedSha256: sha ?? (inside === undefined ? "" : stored.get(inside) ?? ""),
            localSha256: row.sha256
          })
          break
        }
        fresh.push(row)
      }
      const [head, ...tail] = fresh
      if (head !== undefined) {
        yield* sql`insert into events ${
          sql.insert([head, ...tail])
        } on conflict (session_id, epoch, byte_offset) do nothing`
      }
    }
    const lastAccepted = accepted > 0 ? rows[accepted - 1] : undefined
    const offset = lastAccepted === undefined ? target.offset : lastAccepted.byte_offset + lastAccepted.length + 1
    const turns = accepted > 0 ? turnsAfter[accepted - 1] ?? target.turns : target.turns
    yield* sql`
      update replication_cursors set epoch = ${target.epoch}, byte_offset = ${offset},
        turn_count = ${turns.turnCount}, open_turn = ${turns.openTurn ?? null}, updated_at = now()
      where session_id = ${session}`
    const bytes = fresh.reduce((n, r) => n + r.length + 1, 0)
    return {
      _tag: "Committed",
      epoch: target.epoch,
      offset,
      inserted: fresh.length,
      skipped,
      bytes,
      newEpoch: target.newEpoch,
      size: local.size,
      conflict
    } as const
  })

/** One batch of one session: decide the epoch, read complete lines, check nothing was rewritten meanwhile, commit. */
const replicateBatch = (
  sql: SqlClient.SqlClient,
  fs: SessionFsApi,
  paths: SessionPaths,
  session: string,
  options: ReplicateOptions
): Effect.Effect<BatchOutcome, ReplicationError, SessionFs> =>
  Effect.gen(function*() {
    const stored = yield* readCursor(sql, session)
    const before = yield* readLocalState(fs, paths)
    if (Option.isNone(before)) return { _tag: "CaughtUp" } as const
    const local = before.value
    const target: BatchTarget = Option.isNone(stored)
      ? {
        epoch: 0,
        offset: 0,
        turns: initialTurnState(local.base),
        base: local.base,
        newEpoch: true,
        expect: undefined
      }
      : local.base !== stored.value.base || local.size < stored.value.offset
      ? {
        epoch: stored.value.epoch + 1,
        offset: 0,
        turns: initialTurnState(local.base),
        base: local.base,
        newEpoch: true,
        expect: stored.value
      }
      : { ...stored.value, newEpoch: false, expect: stored.value }
    const maxBytes = Math.max(1, options.maxBatchBytes ?? DEFAULT_BATCH_BYTES)
    const maxLines = Math.min(MAX_BATCH_LINES, Math.max(1, options.maxBatchLines ?? DEFAULT_BATCH_LINES))
    const read = yield* readBatch(fs, paths.events, target.offset, local.size, maxBytes, maxLines).pipe(
      Effect.map(Option.some),
      // The log shrank under the read: a cap rewrite; the next batch sees it.
      Effect.catchIf((e) => e.code === "UNEXPECTED_EOF", () => Effect.succeed(Option.none()))
    )
    if (Option.isNone(read)) {
      return { _tag: "Retry", reason: "the log shrank while it was read (a cap rewrite)" } as const
    }
    const lines = read.value
    if (lines.length === 0 && !target.newEpoch) return { _tag: "CaughtUp" } as const
    // A cap rewrite between the first look and the read would have mixed two logs: check again.
    const after = yield* readLocalState(fs, paths)
    if (Option.isNone(after) || after.value.base !== target.base) {
      return { _tag: "Retry", reason: "the log was rewritten while it was read (a cap rewrite)" } as const
    }
    const rows: Array<EventRow> = []
    const turnsAfter: Array<TurnState> = []
    let turns = target.turns
    for (const line of lines) {
      const next = lineRow(session, target.epoch, line.offset, line.bytes, turns)
      rows.push(next.row)
      turnsAfter.push(next.turns)
      turns = next.turns
    }
    return yield* sql.withTransaction(commitBatch(sql, session, options, local, target, rows, turnsAfter))
  }).pipe(sqlDefectsAsFailures)

/**
 * The regular files of a session directory, as slash-separated relative paths: temporaries of
 * atomic writes (dot names) and unsafe names are never carried; the log only when `withLog`.
 */
const sessionFiles = (
  fs: SessionFsApi,
  dir: string,
  withLog: boolean
): Effect.Effect<Array<string>, StoreIoError> => listSessionFiles(fs, dir, { skipDotNames: true, skipLog: !withLog })

/** The size and mtime of every file of a session directory, log included: unchanged means nothing to replicate. */
const directorySignature = (fs: SessionFsApi, dir: string) =>
  Effect.gen(function*() {
    const files = yield* sessionFiles(fs, dir, true)
    const infos = yield* fs.lstatMany(files.map((f) => NodePath.join(dir, f)))
    return files.map((f, i) => {
      const info = infos[i]
      return info === undefined ? `${f}:-` : `${f}:${fileSignature(info)}`
    }).join("\n")
  })

/** Mirrors the session's other files into `files`: changed ones replaced, vanished ones removed. */
const syncFiles = (
  sql: SqlClient.SqlClient,
  fs: SessionFsApi,
  paths: SessionPaths,
  session: string,
  signatures: Map<string, string> | undefined
) =>
  Effect.gen(function*() {
    const local = yield* sessionFiles(fs, paths.dir, false)
    const storedRows = yield* sql<{ readonly path: string; readonly sha256: string }>`
      select path, sha256 from files where session_id = ${session}`
    const stored = new Map(storedRows.map((r) => [r.path, r.sha256] as const))
    let written = 0
    const present = new Set<string>()
    for (const path of local) {
      const absolute = NodePath.join(paths.dir, path)
      const info = yield* fs.lstat(absolute)
      if (Option.isNone(info) || info.value.type !== "File") continue
      present.add(path)
      const key = `${session}\u0000${path}`
      const signature = fileSignature(info.value)
      if (stored.has(path) && signatures?.get(key) === signature) continue
      const content = yield* fs.readFileNoFollow(absolute)
      if (Option.isNone(content)) {
        present.delete(path)
        continue
      }
      const sha256 = sha256Hex(content.value)
      if (stored.get(path) !== sha256) {
        yield* sql`
          insert into files (session_id, path, size, sha256, content)
          values (${session}, ${path}, ${content.value.length}, ${sha256}, ${content.value})
          on conflict (session_id, path) do update set
            size = excluded.size, sha256 = excluded.sha256, content = excluded.content, updated_at = now()`
        written++
      }
      signatures?.set(key, signature)
    }
    let removed = 0
    for (const path of stored.keys()) {
      if (present.has(path)) continue
      yield* sql`delete from files where session_id = ${session} and path = ${path}`
      removed++
    }
    return { written, removed }
  })

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
