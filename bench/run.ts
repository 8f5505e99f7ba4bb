/**
 * `npm run bench [-- --quick] [-- --only P1,P4]`: runs the README.md#performance benchmarks P1 to P15, each
 * against its raw Node baseline in this same process, prints per-benchmark medians, and ends
 * with one `P<n>: <value>` line per benchmark (ratios for P1–P4, peak MiB for P5) so scripts
 * can read the last lines. Data sets are seeded and live in a temp dir removed at exit.
 *
 * Run with `node --conditions=@logbook/source --expose-gc bench/run.ts` (the npm script does):
 * the condition resolves workspace packages to their TypeScript sources, `--expose-gc` lets
 * rounds start from a collected heap. Add `--cpu-prof` to profile.
 */
import type { BenchContext } from "./lib/context.ts"
import { makeContext, profileOf } from "./lib/context.ts"
import { makeTempRoot } from "./lib/fixtures.ts"
import type { Outcome } from "./lib/measure.ts"
import { note } from "./lib/measure.ts"
import { runP1, runP1b } from "./p1-append.ts"
import { runP10 } from "./p10-explain.ts"
import { runP11 } from "./p11-replication.ts"
import { runP12 } from "./p12-mcp.ts"
import { runP13 } from "./p13-recorder.ts"
import { runP14 } from "./p14-serve.ts"
import { runP15 } from "./p15-search-scale.ts"
import { runP2 } from "./p2-commit.ts"
import { runP3 } from "./p3-open.ts"
import { runP4 } from "./p4-rescan.ts"
import { runP5 } from "./p5-rss.ts"
import { runP5w } from "./p5w-cli.ts"
import { runP6 } from "./p6-search.ts"
import { runP7 } from "./p7-pack.ts"
import { runP8 } from "./p8-cli.ts"
import { runP9 } from "./p9-import.ts"
import { runP9b } from "./p9b-import-all.ts"

const args = process.argv.slice(2)
const quick = args.includes("--quick")
const onlyArg = args.find((a) => a.startsWith("--only"))
const onlyValue = onlyArg === undefined
  ? undefined
  : onlyArg.includes("=")
  ? onlyArg.slice(onlyArg.indexOf("=") + 1)
  : args[args.indexOf(onlyArg) + 1]
const only = onlyValue === undefined ? undefined : new Set(onlyValue.toUpperCase().split(","))

// P5 runs before P3: its child's rescan publishes the large log's metadata, which P3 reuses.
const order: ReadonlyArray<readonly [string, (ctx: BenchContext) => Promise<Outcome>]> = [
  ["P1", runP1],
  ["P2", runP2],
  ["P4", runP4],
  ["P5", runP5],
  ["P3", runP3],
  ["P7", runP7],
  ["P6", runP6],
  ["P9", runP9],
  ["P9b", runP9b],
  ["P10", runP10],
  ["P1b", runP1b],
  ["P8", runP8],
  ["P5w", runP5w],
  ["P11", runP11],
  ["P12", runP12],
  ["P13", runP13],
  ["P14", runP14],
  ["P15", runP15]
]

const root = makeTempRoot()
const ctx = makeContext(root, profileOf(quick))
note(`logbook bench (${quick ? "quick" : "full"}), node ${process.version}, data in ${root}`)
const started = performance.now()
const outcomes = new Map<string, Outcome>()
let failed = false
for (const [id, run] of order) {
  if (only !== undefined && !only.has(id.toUpperCase())) continue
  note(`${id} …`)
  try {
    outcomes.set(id, await run(ctx))
  } catch (error) {
    failed = true
    console.log(`${id} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  }
  console.log("")
}

const ids = [...outcomes.keys()].sort()
console.log(`goals (${((performance.now() - started) / 1000).toFixed(0)} s):`)
for (const id of ids) {
  const o = outcomes.get(id)
  if (o !== undefined) console.log(`  ${id} ${o.text} (goal ${o.goal}) ${o.met ? "met" : "NOT MET"}`)
}
for (const id of ids) {
  const o = outcomes.get(id)
  if (o !== undefined) console.log(`${id}: ${o.text}`)
}
if (failed) process.exitCode = 1
