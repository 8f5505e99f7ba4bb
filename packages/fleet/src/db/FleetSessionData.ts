/**
 * What the fleet holds of one session, read back (docs/fleet.md#fleet-queries): its row in
 * `sessions`, the lines of its latest epoch in offset order, and its other files. Everything is
 * streamed in bounded memory: lines come in pages keyed by byte offset (never one result holding
 * the whole log), file contents in fixed-size slices. Nothing here writes to the database.
 */
import { entryPathProblem, formatRfc3339 } from "@logbook/domain"
import type { RawLine } from "@logbook/store"
import { Effect, Option, Schema, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import type { FleetTarget } from "./FleetDatabase.ts"
import { FleetError, toFleetError } from "./FleetDatabase.ts"

/** The fleet holds no session with this id. */
export class FleetSessionNotFound extends Schema.TaggedError<FleetSessionNotFound>()("FleetSessionNotFound", {
  operation: Schema.String,
  session: Schema.String,
  target: Schema.String
}) {
  override get message(): string {
    return `the fleet ${this.target} holds no session ${JSON.stringify(this.session)}`
  }
}

/**
 * What the fleet holds of a session contradicts itself: a gap between lines, a line whose bytes
 * do not match its stored digest or length, a file whose content does not match its stored size
 * or digest, or a file path that could not be written safely. Reported, never repaired.
 */
export class FleetDataInvalid extends Schema.TaggedError<FleetDataInvalid>()("FleetDataInvalid", {
  operation: Schema.String,
  session: Schema.String,
  target: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `the fleet ${this.target} holds an inconsistent copy of session ${this.session}: ${this.detail}`
  }
}

/** A session's row in the fleet, with the epoch its current log is. */
export interface FleetSessionRow {
  readonly sessionId: string
  readonly originHost: string
  /** The latest epoch of the log (`undefined` when no line was ever replicated). */
  readonly epoch: number | undefined
  /** When the session was last replicated (RFC 3339). */
  readonly lastReplicatedAt: string
}

/** One replicated line: where it starts, its bytes with the trailing `\n`, and what the fleet stored about it. */
export interface FleetLine extends RawLine {
  readonly storedLength: number
  readonly storedSha256: string
}

/** One row of `files` without its content. */
export interface FleetFileInfo {
  readonly path: string
  readonly size: number
  readonly sha256: string
}

/** Lines read per query when streaming a log. */
export const FLEET_LINE_PAGE = 256

/** Bytes of a file's content read per query. */
export const FLEET_FILE_SLICE = 1024 * 1024

const NEWLINE = new Uint8Array([10])

/** The raw bytes of a line followed by its `\n`. */
const withNewline = (line: Uint8Array): Uint8Array => {
  const out = new Uint8Array(line.length + 1)
  out.set(line, 0)
  out.set(NEWLINE, line.length)
  return out
}

/** Reads a session's row; `FleetSessionNotFound` when the fleet has none. */
export const findFleetSession = (
  target: FleetTarget,
  operation: string,
  session: string
): Effect.Effect<FleetSessionRow, FleetError | FleetSessionNotFound, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{
      readonly session_id: string
      readonly origin_host: string
      readonly epoch: number | null
      readonly replicated_ms: number
    }>`
      select s.session_id, s.origin_host,
        (select max(e.epoch) from session_epochs e where e.session_id = s.session_id) as epoch,
        (extract(epoch from s.last_replicated_at) * 1000)::float8 as replicated_ms
      from sessions s where s.session_id = ${session}`.pipe(Effect.mapError(toFleetError(target, operation)))
    const row = rows[0]
    if (row === undefined) {
      return yield* new FleetSessionNotFound({ operation, session, target: target.display })
    }
    return {
      sessionId: row.session_id,
      originHost: row.origin_host,
      epoch: row.epoch === null ? undefined : Number(row.epoch),
      lastReplicatedAt: formatRfc3339(Math.trunc(Number(row.replicated_ms)))
    }
  })

/**
 * The lines of one epoch of a session's log in offset order, each with its `\n`, as the fleet
 * stores them (no check), from the first line at or after byte `from` (default the start). Pages of
 * {@link FLEET_LINE_PAGE} lines keyed by offset, so memory holds one page at a time whatever the
 * log's size.
 */
export const fleetLogLines = (
  target: FleetTarget,
  operation: string,
  session: string,
  epoch: number | undefined,
  from = 0
): Stream.Stream<FleetLine, FleetError, SqlClient.SqlClient> => {
  if (epoch === undefined) return Stream.empty
  type Row = {
    readonly byte_offset: bigint | number | string
    readonly length: number
    readonly sha256: string
    readonly line: Uint8Array
  }
  const page = (after: Option.Option<bigint>) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* (Option.isNone(after)
        ? sql<Row>`
          select byte_offset, length, sha256, line from events
          where session_id = ${session} and epoch = ${epoch} and byte_offset >= ${String(from)}
          order by byte_offset limit ${FLEET_LINE_PAGE}`
        : sql<Row>`
          select byte_offset, length, sha256, line from events
          where session_id = ${session} and epoch = ${epoch} and byte_offset > ${after.value.toString()}
          order by byte_offset limit ${FLEET_LINE_PAGE}`).pipe(Effect.mapError(toFleetError(target, operation)))
      const lines: Array<FleetLine> = rows.map((row) => ({
        offset: Number(row.byte_offset),
        bytes: withNewline(row.line),
        storedLength: Number(row.length),
        storedSha256: row.sha256
      }))
      const last = rows[rows.length - 1]
      const next = rows.length < FLEET_LINE_PAGE || last === undefined
        ? Option.none<Option.Option<bigint>>()
        : Option.some(Option.some(BigInt(last.byte_offset)))
      return [lines, next] as const
    })
  return Stream.paginate(Option.none<bigint>(), page)
}

/**
 * The line of one epoch of a session's log that starts at byte `offset` (with its `\n`, as
 * {@link fleetLogLines} gives it); `undefined` when no line starts there.
 */
export const fleetLineAt = (
  target: FleetTarget,
  operation: string,
  session: string,
  epoch: number | undefined,
  offset: number
): Effect.Effect<FleetLine | undefined, FleetError, SqlClient.SqlClient> =>
  epoch === undefined ? Effect.succeed(undefined) : Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly length: number; readonly sha256: string; readonly line: Uint8Array }>`
      select length, sha256, line from events
      where session_id = ${session} and epoch = ${epoch} and byte_offset = ${String(offset)}`.pipe(
      Effect.mapError(toFleetError(target, operation))
    )
    const row = rows[0]
    return row === undefined
      ? undefined
      : { offset, bytes: withNewline(row.line), storedLength: Number(row.length), storedSha256: row.sha256 }
  })

/**
 * {@link fleetLogLines} checked as a restore needs them: the first line at offset 0, each next
 * line right after the previous one's `\n`, and each line's bytes matching its stored length
 * (with or without the newline) and SHA-256; anything else fails with `FleetDataInvalid`.
 */
export const checkedFleetLogLines = (
  target: FleetTarget,
  operation: string,
  session: string,
  epoch: number | undefined
): Stream.Stream<FleetLine, FleetError | FleetDataInvalid, SqlClient.SqlClient> => {
  const invalid = (detail: string) =>
    Effect.fail(new FleetDataInvalid({ operation, session, target: target.display, detail }))
  return fleetLogLines(target, operation, session, epoch).pipe(
    Stream.mapAccumEffect(() => 0, (expected, line) => {
      if (line.offset !== expected) {
        return invalid(
          line.offset > expected
            ? `bytes ${expected}-${line.offset} of epoch ${epoch} are missing (the log has a gap)`
            : `the line at offset ${line.offset} overlaps the previous one`
        )
      }
      const bare = line.bytes.subarray(0, line.bytes.length - 1)
      if (line.storedLength !== bare.length && line.storedLength !== line.bytes.length) {
        return invalid(`the line at offset ${line.offset} has ${bare.length} bytes, its row says ${line.storedLength}`)
      }
      const sha256 = createHash("sha256").update(bare).digest("hex")
      if (sha256 !== line.storedSha256) {
        return invalid(`the line at offset ${line.offset} does not match its stored SHA-256`)
      }
      return Effect.succeed([expected + line.bytes.length, [line]] as const)
    })
  )
}

/** Bytes and line count of one epoch of a session's log as rebuilt from the fleet (each line plus `\n`). */
export const fleetLogSize = (
  target: FleetTarget,
  operation: string,
  session: string,
  epoch: number | undefined
): Effect.Effect<{ readonly bytes: number; readonly lines: number }, FleetError, SqlClient.SqlClient> =>
  epoch === undefined ? Effect.succeed({ bytes: 0, lines: 0 }) : Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly bytes: bigint | number | string; readonly lines: bigint | number | string }>`
      select coalesce(sum(octet_length(line) + 1), 0)::bigint as bytes, count(*)::bigint as lines
      from events where session_id = ${session} and epoch = ${epoch}`.pipe(
      Effect.mapError(toFleetError(target, operation))
    )
    const row = rows[0]
    return { bytes: Number(row?.bytes ?? 0), lines: Number(row?.lines ?? 0) }
  })

/** The rows of `files` of a session (without content), in path order. */
export const fleetFiles = (
  target: FleetTarget,
  operation: string,
  session: string
): Effect.Effect<ReadonlyArray<FleetFileInfo>, FleetError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<
      { readonly path: string; readonly size: bigint | number | string; readonly sha256: string }
    >`
      select path, size, sha256 from files where session_id = ${session} order by path`.pipe(
      Effect.mapError(toFleetError(target, operation))
    )
    return rows.map((row) => ({ path: row.path, size: Number(row.size), sha256: row.sha256 }))
  })

/**
 * The content of one file of `files` in slices of {@link FLEET_FILE_SLICE} bytes, in order; empty
 * when the file is empty or absent.
 */
export const fleetFileContent = (
  target: FleetTarget,
  operation: string,
  session: string,
  path: string
): Stream.Stream<Uint8Array, FleetError, SqlClient.SqlClient> =>
  Stream.paginate(0, (start: number) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ readonly chunk: Uint8Array | null }>`
        select substring(content from ${start + 1} for ${FLEET_FILE_SLICE}) as chunk
        from files where session_id = ${session} and path = ${path}`.pipe(
        Effect.mapError(toFleetError(target, operation))
      )
      const chunk = rows[0]?.chunk ?? new Uint8Array(0)
      const next = chunk.length < FLEET_FILE_SLICE ? Option.none<number>() : Option.some(start + chunk.length)
      return [chunk.length === 0 ? [] : [chunk], next] as const
    }))

/** The content of a small file of `files` (a manifest, a turn index, a pack) at once; `undefined` when absent. */
export const fleetSmallFile = (
  target: FleetTarget,
  operation: string,
  session: string,
  path: string
): Effect.Effect<Uint8Array | undefined, FleetError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly content: Uint8Array }>`
      select content from files where session_id = ${session} and path = ${path}`.pipe(
      Effect.mapError(toFleetError(target, operation))
    )
    return rows[0]?.content
  })

/** The SHA-256 (hex) and byte count of a stream of chunks, folded as they pass. */
export const digestChunks = <E, R>(
  chunks: Stream.Stream<Uint8Array, E, R>
): Effect.Effect<{ readonly bytes: number; readonly sha256: string }, E, R> =>
  Effect.suspend(() => {
    const hash = createHash("sha256")
    let bytes = 0
    return Stream.runForEach(chunks, (chunk) =>
      Effect.sync(() => {
        hash.update(chunk)
        bytes += chunk.length
      })).pipe(Effect.map(() => ({ bytes, sha256: hash.digest("hex") })))
  })

/** Why a stored file path could not be written below a session directory, or `undefined` when it can. */
export const fleetFilePathProblem = (path: string): string | undefined =>
  entryPathProblem(path) ?? (path === "events.jsonl" ? "the log is rebuilt from its lines, not from files" : undefined)
