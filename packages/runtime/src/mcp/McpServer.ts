/**
 * The `logbook mcp` server: the {@link LogbookTools} toolkit with its handlers over one sessions
 * root (or a fleet), the resource templates `logbook://session/{id}` and `logbook://session/{id}/turn/{n}`,
 * served on stdio by `effect/ai`'s `McpServer`. Logs go to stderr: stdout carries only protocol
 * messages.
 */
import type { FleetTarget } from "@logbook/fleet"
import type { ManifestCache, SessionFs } from "@logbook/store"
import { Effect, Layer, Logger, Schema } from "effect"
import { McpProtocol, McpSchema, McpServer } from "effect/ai"
import { McpToolError } from "./Budget.ts"
import type {
  EvidenceArgs,
  ExplainArgs,
  FactsArgs,
  ListSessionsArgs,
  ReadTurnArgs,
  SearchArgs,
  SessionArgs
} from "./McpHandlers.ts"
import {
  evidence,
  explainSession,
  facts,
  goalProgress,
  listSessions,
  readTurnPage,
  search,
  showSession
} from "./McpHandlers.ts"
import { LogbookTools } from "./McpTools.ts"

/** The name the server reports in `initialize`. */
export const MCP_SERVER_NAME = "logbook"

/** The services the handlers read (the CLI's store layer provides them). */
export type McpServices = SessionFs | ManifestCache

/** What the server reads: a sessions root, or (`logbook mcp --db`) a fleet. */
export type McpSource =
  | { readonly _tag: "Store"; readonly sessionsDir: string }
  | { readonly _tag: "Fleet"; readonly target: FleetTarget }

const instructions = "Logbook: the recorded history of coding-agent sessions. Start with `search` (scope facts or " +
  "history) or `list_sessions`; open a session with `show_session`, a turn with `read_turn`, an explanation with " +
  "`explain_session`. Every item carries a citation; `evidence` returns the exact redacted line behind it. " +
  "Results are cut at `max_tokens`; pass `cursor` back to continue."

/** The store's handlers over `sessionsDir`, in the shape of the fleet's. */
const storeHandlers = (sessionsDir: string) => ({
  search: (args: SearchArgs) => search(sessionsDir, args),
  list_sessions: (args: ListSessionsArgs) => listSessions(sessionsDir, args),
  show_session: (args: SessionArgs) => showSession(sessionsDir, args),
  read_turn: (args: ReadTurnArgs) => readTurnPage(sessionsDir, args),
  explain_session: (args: ExplainArgs) => explainSession(sessionsDir, args),
  evidence: (args: EvidenceArgs) => evidence(sessionsDir, args),
  facts: (args: FactsArgs) => facts(sessionsDir, args),
  goal_progress: (args: SessionArgs) => goalProgress(sessionsDir, args)
})

type StoreHandlers = ReturnType<typeof storeHandlers>

/** The eight tools' handlers over some source, needing the services `R`. */
type HandlerSet<R> = {
  readonly [K in keyof StoreHandlers]: (
    args: Parameters<StoreHandlers[K]>[0]
  ) => Effect.Effect<Effect.Success<ReturnType<StoreHandlers[K]>>, McpToolError, R>
}

/** The handlers of a set, closing over the services they read. */
const closed = <R>(h: HandlerSet<R>) =>
  Effect.map(Effect.context<R>(), (context): HandlerSet<never> => {
    const run = <A>(effect: Effect.Effect<A, McpToolError, R>) => Effect.provide(effect, context)
    return {
      search: (args) => run(h.search(args)),
      list_sessions: (args) => run(h.list_sessions(args)),
      show_session: (args) => run(h.show_session(args)),
      read_turn: (args) => run(h.read_turn(args)),
      explain_session: (args) => run(h.explain_session(args)),
      evidence: (args) => run(h.evidence(args)),
      facts: (args) => run(h.facts(args)),
      goal_progress: (args) => run(h.goal_progress(args))
    }
  })

const asText = (value: unknown): string => JSON.stringify(value, null, 1)

/** The resource templates: a session's summary and one turn's first page, as JSON text. */
const resourcesLayer = (h: HandlerSet<never>) =>
  Layer.unwrap(Effect.gen(function*() {
    const session = McpServer.resource`logbook://session/${McpSchema.param("id", Schema.String)}`({
      name: "Logbook session",
      description: "One session's summary and turn list (the show_session result's first page)",
      mimeType: "application/json",
      content: (_uri, id) =>
        h.show_session({ session: id }).pipe(
          Effect.map(asText),
          Effect.mapError((e) => new Error(e.message))
        )
    })
    const turn = McpServer.resource`logbook://session/${McpSchema.param("id", Schema.String)}/turn/${
      McpSchema.param("n", Schema.String)
    }`({
      name: "Logbook turn",
      description: "One turn's events, rendered compactly (the read_turn result's first page)",
      mimeType: "application/json",
      content: (_uri, id, n) =>
        (/^[0-9]{1,15}$/u.test(n)
          ? h.read_turn({ session: id, turn: Number(n) })
          : Effect.fail(new McpToolError({ message: `turn must be a positive integer, got ${JSON.stringify(n)}` })))
          .pipe(
            Effect.map(asText),
            Effect.mapError((e) => new Error(e.message))
          )
    })
    return Layer.mergeAll(session, turn)
  }))

/**
 * The MCP server on stdio over `source`, with the tools and resources registered before the
 * first request is read. Needs `Stdio`, the store services, and for a fleet a `SqlClient`; logs
 * to stderr.
 */
export const mcpServerLayer = (source: McpSource, version: string) =>
  McpServer.layerStdio({
    name: MCP_SERVER_NAME,
    version,
    instructions,
    protocols: [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26, McpProtocol.v2024_11_05],
    registrations: source._tag === "Store"
      ? registrations(storeHandlers(source.sessionsDir))
      // One connection at a time: the server answers one request after another.
      // Loaded on use: the PostgreSQL driver stays out of a store's server.
      : Layer.unwrap(Effect.map(
        Effect.promise(() => import("./McpFleetHandlers.ts")),
        (fleet) =>
          registrations(fleet.fleetHandlers(source.target)).pipe(Layer.provide(fleet.fleetClient(source.target)))
      ))
  }).pipe(Layer.provide(Layer.succeed(Logger.LogToStderr, true)))

/** The toolkit and the resource templates over one set of handlers. */
const registrations = <R>(h: HandlerSet<R>) =>
  Layer.unwrap(Effect.map(closed(h), (handlers) =>
    Layer.mergeAll(
      McpServer.toolkit(LogbookTools).pipe(Layer.provide(LogbookTools.toLayer(LogbookTools.of(handlers)))),
      resourcesLayer(handlers)
    )))
