/**
 * What the pages of `logbook serve` read, as one record of operations: the listing, a row's
 * goal and tokens, search, a session's inspection and the records of a byte range, one event, an
 * explanation, and (for a store) the follower of the live view. The store's reader is built here
 * over a sessions root; the fleet's (`logbook serve --db`) in ServeFleet.ts, loaded only then.
 * The routes (ServeApp.ts) render whatever reader they are given the same way.
 */
import type { ExplanationModel } from "@logbook/domain"
import type { InspectedSession, LogRecord, MemorySearchResult, SessionListing } from "@logbook/projections"
import {
  findSession,
  followEventRecords,
  inspectSession,
  queryExplanation,
  readEventRecords,
  recentSessions
} from "@logbook/projections"
import type { ManifestCache } from "@logbook/store"
import { SessionFs } from "@logbook/store"
import type { Duration } from "effect"
import { Effect, Option, Stream } from "effect"
import type { SearchQuery } from "./SearchPage.ts"
import { runSearch } from "./SearchPage.ts"
import type { RowFacts } from "./SessionsPage.ts"
import { foldRow, noRowFacts, ROW_SCAN_BYTES, rowFacts } from "./SessionsPage.ts"

/** The pages' reads; every effect has its services provided already. */
export interface ServeReader {
  /** What the server shows: a sessions root, or a fleet's display name. */
  readonly source: string
  /** Every session, most recently updated first. */
  readonly listing: Effect.Effect<SessionListing, unknown>
  /** The goal and tokens a row shows. */
  readonly rowFacts: (id: string) => Effect.Effect<RowFacts>
  /** The hits of a query (none for an empty one). */
  readonly search: (query: SearchQuery) => Effect.Effect<ReadonlyArray<MemorySearchResult>, unknown>
  /** The whole session's explanation. */
  readonly explanation: (id: string) => Effect.Effect<ExplanationModel, unknown>
  /** The session as inspection sees it (fails `SessionNotFound` or its fleet counterpart). */
  readonly inspect: (id: string) => Effect.Effect<InspectedSession, unknown>
  /** The records of bytes `[start, end)` of the session's log. */
  readonly records: (id: string, start: number, end: number) => Stream.Stream<LogRecord, unknown>
  /** The record whose line starts at `offset`, if one does. */
  readonly eventAt: (id: string, offset: number) => Effect.Effect<Option.Option<LogRecord>, unknown>
  /** The live view's follower: the log's size now, and the records flushed after `from`; none when the source cannot follow. */
  readonly follow:
    | ((id: string) => Effect.Effect<{
      readonly size: number
      readonly records: (from: number) => Stream.Stream<LogRecord, unknown>
    }, unknown>)
    | undefined
}

/** The goal and tokens of a row from the first {@link ROW_SCAN_BYTES} of a stream of its records. */
export const rowFactsOf = <E, R>(records: Stream.Stream<LogRecord, E, R>, size: number) =>
  Stream.runFold(
    records,
    (): RowFacts => ({ ...noRowFacts, partial: size > ROW_SCAN_BYTES }),
    (acc, record) => record._tag === "Event" ? foldRow(acc, record.event) : acc
  ).pipe(Effect.orElseSucceed((): RowFacts => noRowFacts))

const fileSize = (path: string) =>
  SessionFs.use((fs) =>
    Effect.map(fs.lstat(path), (info) => Option.isSome(info) && info.value.type === "File" ? info.value.size : 0)
  )

/** The services the store's reads need (the CLI's store layer and search cache provide them). */
type StoreContext = SessionFs | ManifestCache

/**
 * The reader of a sessions root, closing over the services of the current context. `listing`
 * and `searchRefresh` default to reading per request; the server passes its held ones.
 */
export const storeReader = (options: {
  readonly sessionsDir: string
  readonly pollInterval?: Duration.Input | undefined
  readonly listing?: Effect.Effect<SessionListing, unknown> | undefined
  readonly searchRefresh?: ((scope: "facts" | "history") => Effect.Effect<void, unknown>) | undefined
}) =>
  Effect.map(Effect.context<StoreContext>(), (context): ServeReader => {
    const dir = options.sessionsDir
    const run = <A, E>(effect: Effect.Effect<A, E, StoreContext>) => Effect.provide(effect, context)
    return {
      source: dir,
      listing: options.listing ?? run(recentSessions(dir)),
      rowFacts: (id) => run(rowFacts(dir, id)),
      search: (query) => run(runSearch(dir, query, options.searchRefresh?.(query.scope))),
      explanation: (id) => run(queryExplanation(dir, id, "session")),
      inspect: (id) => run(inspectSession(dir, id)),
      records: (id, start, end) =>
        Stream.unwrap(
          Effect.map(findSession(dir, id), (paths) => readEventRecords(paths.events, { start, end }))
        ).pipe(Stream.provideContext(context)),
      eventAt: (id, offset) =>
        run(Effect.gen(function*() {
          const paths = yield* findSession(dir, id)
          const first = yield* Stream.runHead(readEventRecords(paths.events, { start: offset, chunkSize: 64 * 1024 }))
          return Option.filter(first, (r) => r._tag === "Event" && r.offset === offset)
        })),
      follow: (id) =>
        run(Effect.gen(function*() {
          const paths = yield* findSession(dir, id)
          const size = yield* fileSize(paths.events)
          return {
            size,
            records: (from: number) =>
              followEventRecords(paths.events, { start: from, pollInterval: options.pollInterval }).pipe(
                Stream.provideContext(context)
              )
          }
        }))
    }
  })
