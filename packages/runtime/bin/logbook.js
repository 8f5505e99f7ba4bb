#!/usr/bin/env node
// The `logbook` command as npm links it: a plain-JavaScript shim that exists before the first
// build (so `npm install` can link it) and loads the CLI: the bundle `npm run build` writes to
// dist/bundle/ (one file run with a code cache; it starts about three times as fast), unless a
// later `tsc -b` of any package made it stale, else the compiled dist/bin.js.
import { existsSync, statSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { setFlagsFromString } from "node:v8"

// Bound the heap of a CLI process unless the user tuned it: keep V8's young generation at its
// initial size (1 MiB semi-spaces) and let the old generation grow by 25% over what survived its
// last collection. Streaming a gigabyte log through a rescan otherwise grows the young generation
// to tens of MiB and the old generation's limit with it, for garbage that dies anyway: 200-240 MiB
// peak instead of about 130 (README.md#performance, bench P5w). V8 reads both flags each time it
// would grow a space, so setting them once the process runs still applies.
const heapTuned = /--(max|min)-semi-space-size|--semi-space-growth-factor|--heap-growing-percent/u.test(
  `${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`
)

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
const builds = ["runtime", "fleet", "projections", "store", "domain"]
  .map((pkg) => mtime(new URL(`../../${pkg}/dist/.tsbuildinfo`, import.meta.url)))
  .filter((t) => t !== undefined)
const bundleTime = mtime(bundled)
const fresh = bundleTime !== undefined && builds.every((t) => t <= bundleTime)
const HEAP_FLAGS = "--semi-space-growth-factor=1 --heap-growing-percent=25"
// The servers (`serve`, `mcp`) and the followers (`--watch`, `--follow`) run for minutes to days,
// so they take the flags before anything runs: set 50 ms in, `logbook serve` on 20 000 sessions
// had already grown its young generation and peaked at 164-198 MiB listing them, against
// 130-139 MiB with the flags set first (bench P14). A word in a query that happens to be `serve`
// only costs that command the start-up price below.
const longRunning = process.argv.slice(2).some((arg) =>
  arg === "serve" || arg === "mcp" || arg === "--watch" || arg === "--follow"
)
if (!heapTuned && longRunning) {
  setFlagsFromString(HEAP_FLAGS)
  // The bundle's entry names its code cache after the flags V8 compiled it under (see flagsTag there).
  globalThis[Symbol.for("logbook/v8-flags-at-start")] = HEAP_FLAGS
}
await import((fresh ? bundled : compiled).href)
// Otherwise set only once a command has run for a while: setting them costs about 0.1 s of CPU
// and 12 MiB whenever it happens (measured: bench P8 went from 2.0 to 3.3 × `node -e 0` with them
// set at start), which a long scan does not notice and a quick `show` would. The timer never
// keeps the process alive.
// The entry puts V8's defaults back for the moment it makes its code cache (a cache made under
// other flags than a start's is rejected by that start): it finds them, and these, in the global.
const HEAP_DEFAULTS = "--semi-space-growth-factor=2 --heap-growing-percent=0"
if (!heapTuned && !longRunning) {
  setTimeout(() => {
    setFlagsFromString(HEAP_FLAGS)
    globalThis[Symbol.for("logbook/v8-flags-set-late")] = { flags: HEAP_FLAGS, undo: HEAP_DEFAULTS }
  }, 50).unref()
}
