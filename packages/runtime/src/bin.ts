#!/usr/bin/env node
/**
 * The `logbook` executable: runs the CLI as the process's main program. SIGINT/SIGTERM interrupt
 * it (so `events --follow` stops cleanly); the exit code comes from the failure, after stdout
 * has drained so piped data is never cut off by the exit.
 */
import { enableCompileCache } from "node:module"
import { basename, relative } from "node:path"

// Node's on-disk bytecode cache roughly halves the cost of loading Effect on every run; the CLI
// is imported only afterwards so its modules come from the cache too.
enableCompileCache()
const { runLogbook } = await import("./Cli.ts")
const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const { Runtime } = await import("effect")

const script = process.argv[1] ?? ""
const local = relative(process.cwd(), script)
const invocation = basename(script) === "logbook" || script === ""
  ? "logbook"
  : `node ${local.length > 0 && !local.startsWith("..") ? local : script}`

NodeRuntime.runMain(runLogbook(invocation), {
  disableErrorReporting: true,
  teardown: (exit, onExit) =>
    Runtime.defaultTeardown(exit, (code) => {
      if (code === 0) onExit(code)
      else process.stdout.write("", () => onExit(code))
    })
})
