/**
 * The `logbook` process body that both entries share: `bin.ts` (the compiled CLI) imports it,
 * and `npm run build` bundles it, with everything it imports, into the single file the bin shim
 * runs. Runs the CLI as the process's main program: SIGINT/SIGTERM interrupt it (so
 * `events --follow` stops cleanly); the exit code comes from the failure, after stdout has
 * drained so piped data is never cut off by the exit.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Runtime } from "effect"
import { basename, relative } from "node:path"
import { runLogbook } from "./Cli.ts"

/**
 * How to spell this command in the "run this next" hints: through npm/npx when that is how the
 * user started it (the pinned Node comes with it), else as invoked (`process.argv[1]`).
 */
export const invocationOf = (script: string, cwd: string, viaNpm: boolean): string => {
  const local = relative(cwd, script)
  const name = basename(script)
  return name === "logbook" || name === "logbook.js" || script === ""
    ? (viaNpm ? "npx logbook" : "logbook")
    : `node ${local.length > 0 && !local.startsWith("..") ? local : script}`
}

/** Runs `logbook` with the process's arguments until it exits. */
export const main = (): void =>
  NodeRuntime.runMain(
    runLogbook(
      invocationOf(process.argv[1] ?? "", process.cwd(), process.env.npm_config_user_agent !== undefined)
    ),
    {
      disableErrorReporting: true,
      teardown: (exit, onExit) =>
        Runtime.defaultTeardown(exit, (code) => {
          if (code === 0) onExit(code)
          else process.stdout.write("", () => onExit(code))
        })
    }
  )
