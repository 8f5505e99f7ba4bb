#!/usr/bin/env node
// The `logbook` command as npm links it: a plain-JavaScript shim that exists before the first
// build (so `npm install` can link it) and loads the compiled CLI from dist/.
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const compiled = new URL("../dist/bin.js", import.meta.url)
if (!existsSync(fileURLToPath(compiled))) {
  process.stderr.write("logbook: the CLI is not built yet; run `npm run build` (or `npm run demo`) first\n")
  process.exit(1)
}
await import(compiled.href)
