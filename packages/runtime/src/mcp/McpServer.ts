/**
 * The `logbook mcp` server: the {@link LogbookTools} toolkit with its handlers over one sessions
 * root, the resource templates `logbook://session/{id}` and `logbook://session/{id}/turn/{n}`,
 * served on stdio by `effect/ai`'s `McpServer`. Logs go to stderr: stdout carries only protocol
 * messages.
 */
import type { ManifestCache, SessionFs } from "@logbook/store"
import { Effect, Layer, Logger, Schema } from "effect"
import { McpProtocol, McpSchema, McpServer } from "effect/ai"
import { McpToolError } from "./Budget.ts"
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

const instructions = "Logbook: the recorded history of coding-agent sessions. Start with `search` (scope facts or " +
  "history) or `list_sessions`; open a session with `show_session`, a turn with `read_turn`, an explanation with " +
  "`explain_session`. Every item carries a citation; `evidence` returns the exact redacted line behind it. " +
  "Results are cut at `max_tokens`; pass `cursor` back to continue."

/** The toolkit's handlers over `sessionsDir`, closing over the services they read. */
const handlersLayer = (sessionsDir: string) =>
  LogbookTools.toLayer(Effect.gen(function*() {
    const context = yield* Effect.context<McpServices>()
    const run = <A, R extends McpServices>(effect: Effect.Effect<A, McpToolError, R>) => Effect.provide(effect, context)
    return LogbookTools.of({
      search: (args) => run(search(sessionsDir, args)),
      list_sessions: (args) => run(listSessions(sessionsDir, args)),
      show_session: (args) => run(showSession(sessionsDir, args)),
      read_turn: (args) => run(readTurnPage(sessionsDir, args)),
      explain_session: (args) => run(explainSession(sessionsDir, args)),
      evidence: (args) => run(evidence(sessionsDir, args)),
      facts: (args) => run(facts(sessionsDir, args)),
      goal_progress: (args) => run(goalProgress(sessionsDir, args))
    })
  }))

const asText = (value: unknown): string => JSON.stringify(value, null, 1)

/** The resource templates: a session's summary and one turn's first page, as JSON text. */
const resourcesLayer = (sessionsDir: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const context = yield* Effect.context<McpServices>()
    const session = McpServer.resource`logbook://session/${McpSchema.param("id", Schema.String)}`({
      name: "Logbook session",
      description: "One session's summary and turn list (the show_session result's first page)",
      mimeType: "application/json",
      content: (_uri, id) =>
        showSession(sessionsDir, { session: id }).pipe(
          Effect.map(asText),
          Effect.provide(context),
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
          ? readTurnPage(sessionsDir, { session: id, turn: Number(n) })
          : Effect.fail(new McpToolError({ message: `turn must be a positive integer, got ${JSON.stringify(n)}` })))
          .pipe(
            Effect.map(asText),
            Effect.provide(context),
            Effect.mapError((e) => new Error(e.message))
          )
    })
    return Layer.mergeAll(session, turn)
  }))

/**
 * The MCP server on stdio over `sessionsDir`, with the tools and resources registered before the
 * first request is read. Needs `Stdio` and the store services; logs to stderr.
 */
export const mcpServerLayer = (sessionsDir: string, version: string) =>
  McpServer.layerStdio({
    name: MCP_SERVER_NAME,
    version,
    instructions,
    protocols: [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26, McpProtocol.v2024_11_05],
    registrations: Layer.mergeAll(
      McpServer.toolkit(LogbookTools).pipe(Layer.provide(handlersLayer(sessionsDir))),
      resourcesLayer(sessionsDir)
    )
  }).pipe(Layer.provide(Layer.succeed(Logger.LogToStderr, true)))
