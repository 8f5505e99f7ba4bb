/**
 * The fleet's sessions as the local read side describes a store's (docs/fleet.md#fleet-queries):
 * a listing with the same summaries as `recentSessions` plus each session's origin host, and one
 * session as a `SessionSource` for domain's inspection (the stored manifest and turn index when
 * `open` would trust them, else a rescan of the replicated lines). Read-only.
 */
import type { Manifest } from "@logbook/domain"
import { decodeManifestText, decodePendingCapRewriteText, decodeTurnIndexText } from "@logbook/domain"
import type { InspectedSession, InspectOptions, SessionSource, SessionSummary } from "@logbook/projections"
import { compareRecency, decodeStored, inspectSource, summaryOf } from "@logbook/projections"
import { Effect, Result } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { FleetError, FleetTarget } from "../db/FleetDatabase.ts"
import { toFleetError } from "../db/FleetDatabase.ts"
import type { FleetSessionNotFound, FleetSessionRow } from "../db/FleetSessionData.ts"
import { findFleetSession, fleetFiles, fleetLogLines, fleetLogSize, fleetSmallFile } from "../db/FleetSessionData.ts"

/** A session of a fleet listing: the local summary (never live: the fleet holds no lock) and where it came from. */
export interface FleetSessionSummary extends SessionSummary {
  readonly originHost: string
}

/** A fleet listing: the sessions, and the ids whose replicated manifest is missing or invalid. */
export interface FleetSessionListing {
  readonly target: string
  readonly sessions: ReadonlyArray<FleetSessionSummary>
  readonly unreadable: ReadonlyArray<string>
}

const MANIFEST = "manifest.json"
const TURN_INDEX = "index/turns.json"
const MARKER = "index/pending-cap-rewrite.json"
const RETENTION_PIN_FILE_NAME = "retention-pin.json"

const text = new TextDecoder()

/**
 * Lists the fleet's sessions, most recently updated first (the local order: `compareRecency`),
 * at most `limit`. Summaries come from each session's replicated `manifest.json`; `pinned` is
 * whether its `retention-pin.json` was replicated.
 *
 * **Gotchas**: reads every session's manifest (O(sessions)), as the local listing does.
 */
export const listFleetSessions = (
  target: FleetTarget,
  options: { readonly limit?: number | undefined } = {}
): Effect.Effect<FleetSessionListing, FleetError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{
      readonly session_id: string
      readonly origin_host: string
      readonly manifest: Uint8Array | null
      readonly pinned: boolean
    }>`
      select s.session_id, s.origin_host, m.content as manifest,
        exists (select 1 from files p where p.session_id = s.session_id and p.path = ${RETENTION_PIN_FILE_NAME})
          as pinned
      from sessions s
      left join files m on m.session_id = s.session_id and m.path = ${MANIFEST}
      order by s.session_id`.pipe(Effect.mapError(toFleetError(target, "fleet.sessions")))
    const sessions: Array<FleetSessionSummary> = []
    const unreadable: Array<string> = []
    for (const row of rows) {
      const decoded = row.manifest === null ? undefined : decodeManifestText(text.decode(row.manifest))
      if (decoded === undefined || Result.isFailure(decoded)) {
        unreadable.push(row.session_id)
        continue
      }
      sessions.push(fleetSummary(row.session_id, row.origin_host, decoded.success, row.pinned))
    }
    sessions.sort(compareRecency)
    const limited = options.limit === undefined ? sessions : sessions.slice(0, Math.max(0, options.limit))
    return { target: target.display, sessions: limited, unreadable }
  })

const fleetSummary = (id: string, originHost: string, m: Manifest, pinned: boolean): FleetSessionSummary => ({
  ...summaryOf(id, m, false, pinned),
  originHost
})

/** One fleet session inspected as `show` inspects a directory, with the figures `show` adds. */
export interface FleetSessionView {
  readonly row: FleetSessionRow
  readonly inspection: InspectedSession
  readonly pinned: boolean
  /** The bytes and files the restored directory would have (the log plus every replicated file). */
  readonly usage: { readonly bytes: number; readonly files: number }
}

/**
 * Inspects a fleet session read-only: the replicated manifest, turn index and pending-rewrite
 * marker decoded as inspection decodes files, the log as the latest epoch's lines (pulled only
 * when the stored metadata would not be trusted). Never live: the fleet holds no lock.
 */
export const inspectFleetSession = (
  target: FleetTarget,
  session: string,
  options: InspectOptions = {}
): Effect.Effect<FleetSessionView, FleetError | FleetSessionNotFound, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const operation = "fleet.show"
    const row = yield* findFleetSession(target, operation, session)
    const files = yield* fleetFiles(target, operation, row.sessionId)
    const log = yield* fleetLogSize(target, operation, row.sessionId, row.epoch)
    const manifest = yield* fleetSmallFile(target, operation, row.sessionId, MANIFEST)
    const index = yield* fleetSmallFile(target, operation, row.sessionId, TURN_INDEX)
    const marker = yield* fleetSmallFile(target, operation, row.sessionId, MARKER)
    const source: SessionSource<FleetError, SqlClient.SqlClient> = {
      sessionId: row.sessionId,
      name: row.sessionId,
      live: false,
      eventsPresent: true,
      fileLen: log.bytes,
      endsWithNewline: true,
      mtime: row.lastReplicatedAt,
      manifest: decodeStored(manifest, decodeManifestText),
      index: decodeStored(index, decodeTurnIndexText),
      marker: decodeStored(marker, decodePendingCapRewriteText),
      lines: fleetLogLines(target, operation, row.sessionId, row.epoch)
    }
    const inspection = yield* inspectSource(source, options)
    return {
      row,
      inspection,
      pinned: files.some((f) => f.path === RETENTION_PIN_FILE_NAME),
      usage: {
        bytes: log.bytes + files.reduce((sum, f) => sum + f.size, 0),
        files: files.length + (files.some((f) => f.path === "events.jsonl") ? 0 : 1)
      }
    }
  })
