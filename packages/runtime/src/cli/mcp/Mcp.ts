/**
 * `logbook mcp`: runs the Model Context Protocol server (docs/mcp.md) on stdio over this
 * invocation's sessions root until the client closes its stdin. Stdout carries only protocol
 * messages; nothing is written to the store except the search index snapshot, as `search` does.
 */
import { Cause, Effect, Exit, Fiber, Layer, Option } from "effect"
import { Command } from "effect/cli"
import type { McpSource } from "../../mcp/McpServer.ts"
import { CommandFailed } from "../Errors.ts"
import { fleetSourceFlags } from "../Flags.ts"
import { CLI_VERSION, location } from "../Root.ts"

/** `mcp`. */
export const mcpCommand = Command.make(
  "mcp",
  {
    ...fleetSourceFlags
  },
  Effect.fn("cli.mcp")(function*(args) {
    const source: McpSource = Option.isSome(args.db) || args.fleet
      // Loaded on use, as the fleet commands are: the PostgreSQL driver stays out of every other command.
      ? {
        _tag: "Fleet",
        target: yield* (yield* Effect.promise(() => import("../../mcp/McpFleetHandlers.ts"))).fleetTarget(args.db)
      }
      : { _tag: "Store", sessionsDir: (yield* location).sessionsDir }
    // The stdio transport interrupts the fiber that built it when the client closes stdin: run it
    // in a child fiber, so that end is a normal exit (0) and only Ctrl-C interrupts the command.
    // Loaded on use: effect/ai's server and its RPC stack stay out of every other command's start.
    const { mcpServerLayer } = yield* Effect.promise(() => import("../../mcp/McpServer.ts"))
    const server = yield* Effect.forkChild(Layer.launch(mcpServerLayer(source, CLI_VERSION)))
    const exit = yield* Fiber.await(server)
    if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return
    return yield* Effect.failCause(exit.cause).pipe(
      Effect.mapError((e) =>
        source._tag === "Fleet"
          ? new CommandFailed({
            detail: `the MCP server could not reach the fleet: ${e.message}`,
            hint: "check --db (or LOGBOOK_DATABASE_URL) and that the server is up; `logbook fleet sessions` tests it"
          })
          : new CommandFailed({
            detail: `the MCP server could not start: ${e.message}`,
            hint: "this is a bug in logbook mcp; please report it with the output of `logbook --version`"
          })
      )
    )
  })
).pipe(
  Command.withShortDescription("Serve the store to agents over MCP (stdio): search, sessions, turns, evidence"),
  Command.withDescription(
    "Run a Model Context Protocol server on stdin/stdout over the sessions root, for coding agents: tools search, " +
      "list_sessions, show_session, read_turn, explain_session, evidence, facts and goal_progress, and the resource " +
      "templates logbook://session/{id} and logbook://session/{id}/turn/{n}. Every result is redacted and bounded " +
      "by max_tokens with a cursor to continue. Read-only (the search index snapshot aside). With --db or --fleet " +
      "it serves every session replicated into a fleet instead, with the same tools. See docs/mcp.md."
  ),
  Command.withExamples([
    { command: "claude mcp add logbook -- npx logbook mcp", description: "Give Claude Code its session memory" },
    { command: "logbook --sessions-dir ~/repo/.logbook/sessions mcp", description: "Serve another store" },
    {
      command: "LOGBOOK_DATABASE_URL=postgres://logbook@db:5432/fleet logbook mcp --fleet",
      description: "Serve a fleet"
    }
  ])
)
