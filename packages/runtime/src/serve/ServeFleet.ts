/**
 * The {@link ServeReader} of a fleet (`logbook serve --db`): the same pages over every session
 * replicated into PostgreSQL (docs/fleet.md) — the listing from the replicated manifests, search
 * by `searchFleet`, a session's turns and events from the latest epoch's lines judged by the same
 * `checkLine`, explanations by `explainFleetSession`. A fleet holds no writer to follow, so the
 * live view is not offered (the page shows what was replicated when it was loaded). Loaded only
 * when a fleet is served, so the PostgreSQL driver costs a store's server nothing.
 */
import type { FleetTarget } from "@logbook/fleet"
import {
  explainFleetSession,
  findFleetSession,
  fleetLineAt,
  fleetLogLines,
  fleetLogSize,
  fleetTargetFromConfig,
  inspectFleetSession,
  layerFleetClient,
  listFleetSessions,
  searchFleet
} from "@logbook/fleet"
import type { LogRecord } from "@logbook/projections"
import { logRecordOf } from "@logbook/projections"
import type { Redacted } from "effect"
import { Effect, Layer, Option, Stream } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { SEARCH_LIMIT } from "./SearchPage.ts"
import type { ServeReader } from "./ServeReader.ts"
import { rowFactsOf } from "./ServeReader.ts"
import { ROW_SCAN_BYTES } from "./SessionsPage.ts"

/** The fleet `--db` names (else `LOGBOOK_DATABASE_URL`); a usage error when neither does. */
export const serveFleetTarget = (db: Option.Option<Redacted.Redacted<string>>) => fleetTargetFromConfig("serve", db)

const recordsOf = <E, R>(lines: Stream.Stream<Parameters<typeof logRecordOf>[0], E, R>) =>
  lines.pipe(
    Stream.map(logRecordOf),
    Stream.filter((r): r is LogRecord => r !== undefined)
  )

/**
 * The reader of `target`, with a client held for the current scope (a few connections: the
 * pages of one browser run side by side).
 */
export const fleetReader = (target: FleetTarget) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(layerFleetClient(target, { maxConnections: 4 }))
    const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provide(effect, context)
    const linesOf = (id: string, start: number, end: number) =>
      Stream.unwrap(Effect.map(
        findFleetSession(target, "serve.read", id),
        (row) =>
          fleetLogLines(target, "serve.read", row.sessionId, row.epoch, start).pipe(
            Stream.takeWhile((line) => line.offset < end)
          )
      ))
    return {
      source: target.display,
      listing: run(Effect.map(listFleetSessions(target), (listing) => ({
        sessionsDir: listing.target,
        sessions: listing.sessions,
        unreadable: listing.unreadable
      }))),
      rowFacts: (id) =>
        run(Effect.gen(function*() {
          const row = yield* findFleetSession(target, "serve.row", id)
          const size = yield* fleetLogSize(target, "serve.row", row.sessionId, row.epoch)
          return yield* rowFactsOf(recordsOf(linesOf(id, 0, Math.min(size.bytes, ROW_SCAN_BYTES))), size.bytes)
        })).pipe(Effect.orElseSucceed(() => ({ goal: undefined, tokens: 0, costUsd: undefined, partial: true }))),
      search: (query) =>
        query.text.trim() === ""
          ? Effect.succeed([])
          : run(searchFleet(query.text, { scope: query.scope, maxResults: SEARCH_LIMIT })),
      explanation: (id) => run(explainFleetSession(target, id, "session")),
      inspect: (id) => run(Effect.map(inspectFleetSession(target, id), (view) => view.inspection)),
      records: (id, start, end) => recordsOf(linesOf(id, start, end)).pipe(Stream.provideContext(context)),
      eventAt: (id, offset) =>
        run(Effect.gen(function*() {
          const row = yield* findFleetSession(target, "serve.event", id)
          const line = yield* fleetLineAt(target, "serve.event", row.sessionId, row.epoch, offset)
          return Option.fromUndefinedOr(line === undefined ? undefined : logRecordOf(line))
        })),
      follow: undefined
    } satisfies ServeReader
  })
