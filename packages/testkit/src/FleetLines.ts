/**
 * The line-by-line comparison of what the fleet holds for a session epoch with the local
 * `events.jsonl` (offset, length, SHA-256 of each terminated line, and the bytes), for every
 * fleet test (library and CLI).
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import type { LogLine } from "./LogLines.ts"
import { logLines } from "./LogLines.ts"

/** One line as compared: where it starts, its length without the newline, its digest. */
export type ComparedLine = LogLine

/** The terminated lines of a local log (the unterminated tail, if any, is not acknowledged). */
export const localLines = (path: string): Array<ComparedLine> =>
  logLines(fs.existsSync(path) ? fs.readFileSync(path) : Buffer.alloc(0))

/** The fleet's rows of one session epoch, in offset order, with the digest recomputed from the stored bytes. */
export const fleetLines = (session: string, epoch: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{
      readonly byte_offset: bigint | number
      readonly length: number
      readonly sha256: string
      readonly line: Uint8Array
    }>`select byte_offset, length, sha256, line from events
       where session_id = ${session} and epoch = ${epoch} order by byte_offset`
    return rows.map((r) => {
      const actual = createHash("sha256").update(r.line).digest("hex")
      if (actual !== r.sha256 || r.line.length !== r.length) {
        throw new Error(`row at ${String(r.byte_offset)} holds bytes that do not match its digest or length`)
      }
      return { offset: Number(r.byte_offset), length: Number(r.length), sha256: r.sha256 } satisfies ComparedLine
    })
  }).pipe(Effect.orDie)

/** The cursor of a session: epoch and next byte. */
export const fleetCursor = (session: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly epoch: number; readonly byte_offset: bigint | number }>`
      select epoch, byte_offset from replication_cursors where session_id = ${session}`
    const row = rows[0]
    return row === undefined ? undefined : { epoch: Number(row.epoch), offset: Number(row.byte_offset) }
  }).pipe(Effect.orDie)
