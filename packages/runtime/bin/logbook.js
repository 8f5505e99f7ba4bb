#!/usr/bin/env node
// The `logbook` command as npm links it: a plain-JavaScript shim that exists before the first
// build (so `npm install` can link it) and loads the CLI: the bundle `npm run build` writes to
// dist/bundle/ (one file run with a code cache; it starts about three times as fast), unless a
// later `tsc -b` of any package made it stale, else the compiled dist/bin.js.
import { existsSync, statSync } from "node:fs"
import { PerformanceObserver } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8"

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
// The entry puts V8's defaults back for the moment it makes its code cache (a cache made under
// other flags than a start's is rejected by that start): it finds them, and the flags set late, in
// the global. A test checks them against what this Node's V8 reports.
const HEAP_DEFAULTS = "--semi-space-growth-factor=2 --heap-growing-percent=0"
const [YOUNG_FLAG = "", OLD_FLAG = ""] = HEAP_FLAGS.split(" ")
const [YOUNG_DEFAULT = ""] = HEAP_DEFAULTS.split(" ")
// The servers (`serve`, `mcp`) and the followers (`--watch`, `--follow`) run for minutes to days,
// so they take the flags before anything runs: set 50 ms in, `logbook serve` on 20 000 sessions
// had already grown its young generation and peaked at 164-198 MiB listing them, against
// 130-139 MiB with the flags set first (bench P14). A word in a query that happens to be `serve`
// only costs that command the start-up price below.
const args = process.argv.slice(2)
const longRunning = args.some((arg) => arg === "serve" || arg === "mcp" || arg === "--watch" || arg === "--follow")
// `logbook mcp` answers one tool call after another, and a young generation kept at its first
// 1 MiB made each call collect garbage a few times over: a warm `search` took 7.6 ms instead of
// 5.6, a `read_turn` 2.1 instead of 1.8 (bench P12). Without the cap it peaked at 231 MiB instead of
// 112. So its young generation may grow to 4 MiB first, then stays (6.5-7.1 ms, 1.8-1.9 ms,
// 123-132 MiB, also on 20 000 sessions).
// `serve` keeps the flags from the start: the same cap took it to 225 MiB against a 200 MiB goal.
const MCP_YOUNG_CAP = 4 * 2 ** 20
const agentServer = args.includes("mcp") &&
  !args.some((arg) => arg === "serve" || arg === "--watch" || arg === "--follow")
if (!heapTuned && longRunning) {
  const startFlags = agentServer ? OLD_FLAG : HEAP_FLAGS
  setFlagsFromString(startFlags)
  // The bundle's entry names its code cache after the flags V8 compiled it under (see flagsTag there).
  globalThis[Symbol.for("logbook/v8-flags-at-start")] = startFlags
  if (agentServer) {
    // Checked after each collection; the flag is set once, and the entry undoes it for the moment
    // it makes its code cache (a cache made under other flags than the start's is rejected).
    const observer = new PerformanceObserver(() => {
      const young = getHeapSpaceStatistics().find((space) => space.space_name === "new_space")
      if (young === undefined || young.space_size < MCP_YOUNG_CAP) return
      observer.disconnect()
      setFlagsFromString(YOUNG_FLAG)
      globalThis[Symbol.for("logbook/v8-flags-set-late")] = { flags: YOUNG_FLAG, undo: YOUNG_DEFAULT }
    })
    observer.observe({ entryTypes: ["gc"] })
  }
}
await import((fresh ? bundled : compiled).href)
// Otherwise set only once a command has run for a while: setting them costs about 0.1 s of CPU
// and 12 MiB whenever it happens (measured: bench P8 went from 2.0 to 3.3 × `node -e 0` with them
// set at start), which a long scan does not notice and a quick `show` would. The timer never
// keeps the process alive.
if (!heapTuned && !longRunning) {
  setTimeout(() => {
    setFlagsFromString(HEAP_FLAGS)
    globalThis[Symbol.for("logbook/v8-flags-set-late")] = { flags: HEAP_FLAGS, undo: HEAP_DEFAULTS }
  }, 50).unref()
}
