#!/usr/bin/env node
/**
 * The compiled `logbook` executable (what `tsc -b` alone builds; the bin shim prefers the
 * bundle while it is fresh): checks the Node version, then runs the CLI (Main.ts).
 */
import * as NodeModule from "node:module"

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
const { main } = await import("./Main.ts")
main()
