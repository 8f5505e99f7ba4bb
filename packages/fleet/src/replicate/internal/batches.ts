/**
 * One session's batches: the local state of its log (read in the order that makes a cap rewrite
 * visible), the stored cursor, a bounded batch of complete lines read from the cursor, and its
 * commit — the rows and the advanced cursor in one transaction, a line that differs from the
 * stored one reported as a conflict, never overwritten.
 *
 * **Gotchas**: the cursor row is locked for the transaction, so two replicators of one store
 * never commit the same batch; a batch that finds the cursor moved starts over.
 */
import type { Manifest } from "@logbook/domain"
import { encodeManifest, matchingMarker, parseRfc3339 } from "@logbook/domain"
import type { SessionFsApi, SessionPaths } from "@logbook/store"
import { loadManifest, loadMarker, SessionFs } from "@logbook/store"
import { Effect, Option } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { sqlDefectsAsFailures } from "../../db/FleetDatabase.ts"
import { ReplicationConflict } from "../ReplicationError.ts"
import type { ReplicationError } from "../ReplicationError.ts"
import type { ReplicateOptions } from "../Replicator.ts"
import type { EventRow, TurnState } from "./lineRows.ts"
import { initialTurnState, lineRow } from "./lineRows.ts"

/** Bytes of log per batch by default. */
export const DEFAULT_BATCH_BYTES = 1024 * 1024
/** Lines per batch by default. */
export const DEFAULT_BATCH_LINES = 2000
/** The most lines a batch may take: ten parameters per row; PostgreSQL admits 65 535 per statement. */
// Ten parameters per row; PostgreSQL admits 65 535 per statement.
export const MAX_BATCH_LINES = 6000
/** Batches of one session that may start over in a row before {@link ReplicationGaveUp}. */
export const MAX_BATCH_RETRIES = 1000

/** What the local files say about a session's log: its length, the retained turn base and the manifest. */
export interface LocalState {
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
export const readLocalState = (fs: SessionFsApi, paths: SessionPaths) =>
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
export interface StoredCursor {
  readonly epoch: number
  readonly offset: number
  readonly turns: TurnState
  readonly base: number
}

/** The stored cursor of a session (epoch, next byte, base), none before its first batch. */
export const readCursor = (sql: SqlClient.SqlClient, session: string) =>
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
export const readBatch = (
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

/** An RFC 3339 text as stored, or null when it does not parse. */
export const timestampOrNull = (text: string): string | null => parseRfc3339(text) === undefined ? null : text

/** The target of one batch: where it writes and what the cursor must still say when it commits. */
export interface BatchTarget {
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

/** Commits one batch in the caller's transaction: session and epoch rows, the lines, the advanced cursor. */
export const commitBatch = (
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
export const replicateBatch = (
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
