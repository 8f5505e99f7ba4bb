/**
 * A session's decoded events with the turn each belongs to, in bounded memory: the turn spans
 * come from the effective turn index (what `open` would arrive at, so turn numbers are the ones
 * `logbook turn` accepts), the events from a streamed read of the retained log.
 */
import type { ThreadEvent, TurnEntry } from "@logbook/domain"
import { Effect, Stream } from "effect"
import { readEventRecords } from "../EventStream.ts"
import { inspectSession } from "../Inspection.ts"

/** One decoded event with its byte offset and its turn (undefined outside every turn). */
export interface TurnedEvent {
  readonly event: ThreadEvent
  readonly offset: number
  readonly turn: TurnEntry | undefined
}

/** The session's inspection and a stream of its events with their turns. */
export const turnedEvents = (sessionsDir: string, sessionId: string) =>
  Effect.map(inspectSession(sessionsDir, sessionId), (inspection) => {
    const entries = [...inspection.effectiveEntries].sort((a, b) => a.start_offset - b.start_offset)
    const events = readEventRecords(inspection.paths.events, { end: inspection.fileLen }).pipe(
      Stream.mapAccum(() => 0, (next, record) => {
        if (record._tag !== "Event") return [next, []] as const
        let i = next
        while (i < entries.length && (entries[i]?.end_offset ?? 0) <= record.offset) i++
        const entry = entries[i]
        const turn = entry !== undefined && entry.start_offset <= record.offset ? entry : undefined
        return [i, [{ event: record.event, offset: record.offset, turn }]] as const
      })
    )
    return { inspection, events }
  })
