#!/usr/bin/env node
// The `logbook` command as npm links it: a plain-JavaScript shim that exists before the first
// build (so `npm install` can link it) and loads the CLI: the bundle `npm run build` writes to
// dist/bundle/ (one file run with a code cache; it starts about three times as fast), unless a
// later `tsc -b` of any package made it stale, else the compiled dist/bin.js.
import { existsSync, statSync } from "node:fs"
import { fileURLToPath } from "node:url"

const compiled = new URL("../dist/bin.js", import.meta.url)
const bundled = new URL("../dist/bundle/bin.js", import.meta.url)
if (!existsSync(fileURLToPath(compiled))) {
  process.stderr.write("logbook: the CLI is not built yet; run `npm run build` (or `npm run demo`) first\n")
  process.exit(1)
}

const mtime = (url) => {
  const path = fileURLToPath(url)
  return existsSync(path) ? statSync(path).mtimeMs : undefined
}
// In this repository each package's build info is rewritten by every `tsc -b` that changed it.
const builds = ["runtime", "projections", "store", "domain"]
  .map((pkg) => mtime(new URL(`../../${pkg}/dist/.tsbuildinfo`, import.meta.url)))
  .filter((t) => t !== undefined)
const bundleTime = mtime(bundled)
const fresh = bundleTime !== undefined && builds.every((t) => t <= bundleTime)
await import((fresh ? bundled : compiled).href)
