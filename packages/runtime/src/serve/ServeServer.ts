/**
 * `logbook serve` on the Node HTTP server: binds, learns the port it got (port 0 picks a free
 * one), makes the run's token, builds the {@link serveApp} with the `Host` policy of the bound
 * address, and serves until its scope closes. Read-only: the store is only read (the search
 * index aside, as `logbook search` saves it).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type { FleetTarget } from "@logbook/fleet"
import { currentSearchIndexes, refreshSearchIndex, SearchIndexCache } from "@logbook/projections"
import type { ManifestCache, SessionFs } from "@logbook/store"
import type { Duration } from "effect"
import { Effect } from "effect"
import { createServer } from "node:http"
import { makeRevalidating } from "./Revalidating.ts"
import { hostPolicy, serveApp } from "./ServeApp.ts"
import type { ServeReader } from "./ServeReader.ts"
import { storeReader } from "./ServeReader.ts"
import { ServeToken } from "./ServeToken.ts"
import { usageSummary } from "./UsagePage.ts"

/** How old the held listing and search indexes may get before a request starts re-reading them. */
export const REFRESH_MS = 2000

/** The services the pages read (the CLI's store layer and search cache provide them). */
export type ServeServices = SessionFs | ManifestCache

/** Where to listen and what to serve. */
export interface ServeOptions {
  readonly sessionsDir: string
  /** Serve this fleet instead of the sessions root (`logbook serve --db`). */
  readonly fleet?: FleetTarget | undefined
  readonly host: string
  /** 0: any free port. */
  readonly port: number
  readonly pollInterval?: Duration.Input | undefined
}

/** A running server: the port it got, its token and the URL to open (token included). */
export interface RunningServer {
  readonly host: string
  readonly port: number
  readonly token: string
  readonly url: string
}

/** Whether `host` listens beyond this machine (every interface, or not a loopback address). */
export const isExposed = (host: string): boolean =>
  !(host === "127.0.0.1" || host === "::1" || host === "localhost" || host.startsWith("127."))

/** The URL a person opens: the bound address (loopback for an every-interface bind) with the token. */
export const serverUrl = (host: string, port: number, token: string): string => {
  const name = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "[::1]" : host.includes(":") ? `[${host}]` : host
  return `http://${name}:${port}/?token=${token}`
}

/**
 * Starts the server in the current scope (closed with it) and returns where it listens. Fails
 * with the server's `ServeError` when the address cannot be bound (in use, not local).
 */
export const startServer = Effect.fn("Serve.startServer")(function*(options: ServeOptions) {
  const server = yield* NodeHttpServer.make(() => createServer(), { host: options.host, port: options.port })
  const port = server.address._tag === "UnixPathAddress" ? 0 : server.address.port
  const token = yield* ServeToken.use((t) => t.generate)
  const context = yield* Effect.context<ServeServices>()
  // One set of search indexes for the server's life (the host's, when it provides one): searches stay warm.
  const indexes = yield* currentSearchIndexes
  const withServices = <A, E>(effect: Effect.Effect<A, E, ServeServices | SearchIndexCache>) =>
    effect.pipe(Effect.provide(context), Effect.provideService(SearchIndexCache, indexes))
  // The listing and the search indexes are re-read in the background, so no request pays for
  // statting every session of a large store (Revalidating: at most one refresh old).
  const fleet = options.fleet
  let warm: Effect.Effect<unknown, unknown> = Effect.void
  let base: ServeReader
  if (fleet === undefined) {
    const facts = yield* makeRevalidating(withServices(refreshSearchIndex(options.sessionsDir, "facts")), REFRESH_MS)
    const history = yield* makeRevalidating(
      withServices(refreshSearchIndex(options.sessionsDir, "history")),
      REFRESH_MS
    )
    warm = history.get
    base = yield* withServices(storeReader({
      sessionsDir: options.sessionsDir,
      pollInterval: options.pollInterval,
      searchRefresh: (scope) => Effect.asVoid(scope === "facts" ? facts.get : history.get)
    }))
  } else {
    // Loaded on use: the PostgreSQL driver stays out of a store's server.
    const { fleetReader } = yield* Effect.promise(() => import("./ServeFleet.ts"))
    base = yield* fleetReader(fleet)
  }
  const listing = yield* makeRevalidating(base.listing, REFRESH_MS)
  const reader: ServeReader = { ...base, listing: listing.get }
  const usage = yield* makeRevalidating(
    Effect.flatMap(listing.get, (held) => usageSummary(reader.rowFacts, held)),
    REFRESH_MS * 5
  )
  const app = serveApp({
    sessionsDir: options.sessionsDir,
    reader,
    token,
    allowedHost: hostPolicy(options.host, port),
    pollInterval: options.pollInterval,
    usage: usage.get
  })
  // Warm up in the background: the listing, then the history index (a large store's first search
  // would otherwise build it while the person waits); a request arriving meanwhile waits for the
  // same computation, never a second one.
  yield* Effect.forkScoped(Effect.ignore(Effect.andThen(listing.get, warm)))
  yield* server.serve(app.pipe(Effect.provide(context), Effect.provideService(SearchIndexCache, indexes)))
  return { host: options.host, port, token, url: serverUrl(options.host, port, token) } satisfies RunningServer
})
