#!/usr/bin/env node
/**
 * The `logbook` executable: runs the CLI as the process's main program. SIGINT/SIGTERM interrupt
 * it (so `events --follow` stops cleanly); the exit code comes from the failure, after stdout
 * has drained so piped data is never cut off by the exit.
 */
import * as NodeModule from "node:module"
import { basename, relative } from "node:path"

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `logbook: Node ${process.versions.node} is too old; Logbook needs Node >= 22.19 ` +
      "(inside this repository run it through npm or npx, which use the pinned Node 24)\n"
  )
  process.exit(1)
}

// Node's on-disk bytecode cache roughly halves the cost of loading Effect on every run; the CLI
// is imported only afterwards so its modules come from the cache too.
NodeModule.enableCompileCache()
const { runLogbook } = await import("./Cli.ts")
const NodeRuntime = await import("@effect/platform-node/NodeRuntime")
const { Runtime } = await import("effect")

// How to spell this command in the "run this next" hints: through npm/npx when that is how the
// user started it (the pinned Node comes with it), else as invoked.
const script = process.argv[1] ?? ""
const local = relative(process.cwd(), script)
const name = basename(script)
const viaNpm = process.env.npm_config_user_agent !== undefined
const invocation = name === "logbook" || name === "logbook.js" || script === ""
  ? (viaNpm ? "npx logbook" : "logbook")
  : `node ${local.length > 0 && !local.startsWith("..") ? local : script}`

NodeRuntime.runMain(runLogbook(invocation), {
  disableErrorReporting: true,
  teardown: (exit, onExit) =>
    Runtime.defaultTeardown(exit, (code) => {
      if (code === 0) onExit(code)
      else process.stdout.write("", () => onExit(code))
    })
})
