/**
 * The `logbook` command tree and how one invocation runs: parse with `effect/cli`, run the
 * command over the Node store services, and turn any failure into one message on stderr and an
 * exit code (0 ok, 1 failure, 2 usage, 3 not found, 4 evicted turn or invalid audit pack, 5 integrity problem).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { redactSecrets, terminalSafe } from "@logbook/domain"
import { SearchIndexCache } from "@logbook/projections"
import { Cause, Console, Data, Effect, Layer, Runtime } from "effect"
import { CliOutput, Command } from "effect/cli"
import { demoCommand } from "./cli/demo/Demo.ts"
import { renderCause } from "./cli/ErrorRendering.ts"
import { evidenceCommand, explainCommand } from "./cli/explain/Explain.ts"
import { fleetCommand } from "./cli/fleet/Fleet.ts"
import { replicateCommand } from "./cli/fleet/Replicate.ts"
import { goalCommand, progressCommand } from "./cli/goals/Goal.ts"
import { importCommand } from "./cli/import/Import.ts"
import { matrixCommand } from "./cli/matrix/Matrix.ts"
import { mcpCommand } from "./cli/mcp/Mcp.ts"
import { factsCommand, memoryCommand, searchCommand } from "./cli/memory/Memory.ts"
import { packCommand } from "./cli/packs/Pack.ts"
import { migrateCommand } from "./cli/retention/Migrate.ts"
import { retentionCommand } from "./cli/retention/Retention.ts"
import { CLI_VERSION, Invocation, rootCommand } from "./cli/Root.ts"
import { serveCommand } from "./cli/serve/Serve.ts"
import { appendCommand } from "./cli/session/Append.ts"
import { eventsCommand, turnCommand } from "./cli/session/Events.ts"
import { sessionsCommand } from "./cli/session/Sessions.ts"
import { showCommand } from "./cli/session/Show.ts"
import { verifyCommand } from "./cli/session/Verify.ts"
import { storeLayerNode } from "./SessionMemory.ts"

/** The whole command tree. */
export const logbookCli = rootCommand.pipe(
  Command.withSubcommands([
    demoCommand,
    appendCommand,
    sessionsCommand,
    showCommand,
    turnCommand,
    eventsCommand,
    verifyCommand,
    retentionCommand,
    matrixCommand,
    goalCommand,
    progressCommand,
    packCommand,
    migrateCommand,
    memoryCommand,
    factsCommand,
    searchCommand,
    importCommand,
    explainCommand,
    evidenceCommand,
    replicateCommand,
    fleetCommand,
    mcpCommand,
    serveCommand
  ])
)

/**
 * Help and version as usual on stdout; a usage error as a short message on stderr (the errors,
 * the usage line and where the full help is) instead of the whole help page on stdout.
 */
const presenter: CliOutput.Presenter = {
  present: (event) => {
    if (event._tag !== "InvalidInvocation") return CliOutput.defaultPresenter.present(event)
    const path = event.commandPath.join(" ")
    return Console.error(terminalSafe(
      [
        ...event.errors.map((error) => `${path}: ${error.message}`),
        `usage: ${event.helpDoc.usage}`,
        event.commandPath.length > 1
          ? `Run \`${path} --help\` for the flags and examples, \`logbook --help\` for every command.`
          : "Run `logbook --help` for every command, its flags and examples."
      ].join("\n")
    ))
  }
}

/** The failure `runMain` sees: carries the exit code; its message was already printed. */
export class CliExit extends Data.TaggedError("CliExit")<{ readonly code: number }> {
  override get [Runtime.errorExitCode](): number {
    return this.code
  }
  override readonly [Runtime.errorReported] = false
}

/**
 * Runs one invocation with the arguments of the process. `invocation` is how the user ran the
 * CLI (`logbook`, or `node path/to/bin.js`), repeated in the commands `demo` prints.
 */
export const runLogbook = (invocation: string): Effect.Effect<void, CliExit> =>
  Command.run(logbookCli, { version: CLI_VERSION }).pipe(
    Effect.provideService(Invocation, invocation),
    Effect.catchCause((cause): Effect.Effect<never, CliExit> => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
      // renderCause takes causes of `LogbookFailure` only: a command error it cannot render fails to compile here.
      const { exitCode, text } = renderCause(cause)
      const exit = new CliExit({ code: exitCode })
      return text === undefined
        ? Effect.fail(exit)
        : Effect.andThen(Console.error(terminalSafe(redactSecrets(text))), Effect.fail(exit))
    }),
    Effect.provide(
      Layer.mergeAll(storeLayerNode, SearchIndexCache.layer, NodeServices.layer, CliOutput.layerPresenter(presenter))
    )
  )
