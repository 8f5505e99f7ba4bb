/**
 * One turn of a replicated session read as `readTurn` reads it from a directory: located in the
 * turn table inspection trusts (the replicated index, or a rescan of the lines), its records
 * judged line by line by the same `checkLine`, streamed in pages from the first line of the turn.
 * Read-only.
 */
import type { TurnEntry } from "@logbook/domain"
import { locateTurnIn } from "@logbook/domain"
import type { LogRecord } from "@logbook/projections"
import { logRecordOf } from "@logbook/projections"
import { TurnEvicted, TurnNotFound } from "@logbook/store"
import { Effect, Stream } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { FleetError, FleetTarget } from "../db/FleetDatabase.ts"
import type { FleetLine, FleetSessionNotFound } from "../db/FleetSessionData.ts"
import { fleetLogLines } from "../db/FleetSessionData.ts"
import type { FleetSessionView } from "./FleetSessions.ts"
import { inspectFleetSession } from "./FleetSessions.ts"

/** A fleet turn located for reading: the session as inspected, its entry, and its lines and records. */
export interface FleetTurnRecords {
  readonly view: FleetSessionView
  readonly entry: TurnEntry
  /** The turn's lines in offset order (each with its `\n`). */
  readonly lines: Stream.Stream<FleetLine, FleetError, SqlClient.SqlClient>
  /** The turn's records, as `readTurn` gives them for a directory. */
  readonly records: Stream.Stream<LogRecord, FleetError, SqlClient.SqlClient>
}

/**
 * Locates turn `turn` of a fleet session and streams its span. Fails `TurnEvicted` for a turn
 * below the first retained one, `TurnNotFound` for any other number the table lacks, and
 * `FleetSessionNotFound` when the fleet has no such session.
 */
export const readFleetTurn = (
  target: FleetTarget,
  session: string,
  turn: number
): Effect.Effect<
  FleetTurnRecords,
  FleetError | FleetSessionNotFound | TurnEvicted | TurnNotFound,
  SqlClient.SqlClient
> =>
  Effect.gen(function*() {
    const view = yield* inspectFleetSession(target, session)
    const inspection = view.inspection
    const located = locateTurnIn(
      inspection.effectiveTable,
      inspection.effectiveManifest.retained_turn_base ?? 1,
      turn
    )
    if (located._tag === "Evicted") {
      return yield* new TurnEvicted({ session, turn, retainedTurnBase: located.retainedTurnBase })
    }
    if (located._tag === "NeverExisted") return yield* new TurnNotFound({ session, turn })
    const entry = located.entry
    const end = Math.min(entry.end_offset, inspection.fileLen)
    const lines = fleetLogLines(target, "fleet.turn", view.row.sessionId, view.row.epoch, entry.start_offset).pipe(
      Stream.takeWhile((line) => line.offset < end)
    )
    const records = lines.pipe(
      Stream.map(logRecordOf),
      Stream.filter((r): r is LogRecord => r !== undefined)
    )
    return { view, entry, lines, records } satisfies FleetTurnRecords
  })
