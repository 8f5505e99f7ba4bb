/**
 * `npm run test:crash`: the long crash suite (docs/testing.md). Child processes — event-log writers
 * with and without constant cap rewrites, and retention runs removing large sessions — are
 * SIGKILLed at seeded random instants; after every kill the session (or sessions root) is
 * reopened and checked (packages/store/test/fixtures/crashSuite*.ts). Prints one line per
 * finished segment, the statistics of where kills landed, and finally the plain line
 * `N passed, M failed`; exits non-zero on any failure.
 *
 * Environment:
 * - `LOGBOOK_CRASH_ITERATIONS` (default 1000): kills in total.
 * - `LOGBOOK_CRASH_SEED` (default 20261003): seeds every segment's plans; a failure names its
 *   segment seed. Kill instants are real time, so a rerun repeats the plans, not the exact points.
 * - `LOGBOOK_CRASH_JOBS` (default 2): segments run side by side.
 * - `LOGBOOK_CRASH_SEGMENT` (default 25): kills per fresh session or root.
 * - `LOGBOOK_CRASH_MIX` (default `append=4,cap=4,retention=2`): relative weights of the lanes.
 * - `LOGBOOK_CRASH_TMP` (default the OS temporary directory, a real disk): where sessions live.
 *
 * Run with `node --conditions=@logbook/source test/crash/run.ts` (the npm script does).
 */
import { Effect } from "effect"
import * as os from "node:os"
import type { LaneKind } from "../../packages/store/test/fixtures/crashSuite.ts"
import { runCrashSuite } from "../../packages/store/test/fixtures/crashSuite.ts"

const env = (name: string, fallback: number): number => {
  const raw = process.env[name]
  const value = raw === undefined || raw.length === 0 ? fallback : Number(raw)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${raw}`)
  return value
}

const parseMix = (raw: string | undefined): Record<LaneKind, number> => {
  const mix: Record<LaneKind, number> = { append: 4, cap: 4, retention: 2 }
  if (raw === undefined || raw.length === 0) return mix
  mix.append = 0
  mix.cap = 0
  mix.retention = 0
  for (const part of raw.split(",")) {
    const [kind, weight] = part.split("=")
    if (kind !== "append" && kind !== "cap" && kind !== "retention") throw new Error(`unknown lane kind '${kind}'`)
    mix[kind] = Number(weight ?? "1")
  }
  return mix
}

const options = {
  iterations: env("LOGBOOK_CRASH_ITERATIONS", 1000),
  seed: env("LOGBOOK_CRASH_SEED", 20261003),
  jobs: Math.max(1, env("LOGBOOK_CRASH_JOBS", 2)),
  segmentSize: Math.max(1, env("LOGBOOK_CRASH_SEGMENT", 25)),
  mix: parseMix(process.env["LOGBOOK_CRASH_MIX"]),
  tmp: process.env["LOGBOOK_CRASH_TMP"] ?? os.tmpdir(),
  log: (line: string) => void process.stdout.write(`${line}\n`)
}

options.log(
  `crash suite: ${options.iterations} kills, seed ${options.seed}, ${options.jobs} jobs, ` +
    `${options.segmentSize} per segment, mix ${JSON.stringify(options.mix)}, in ${options.tmp}`
)
const started = performance.now()
const result = await Effect.runPromise(runCrashSuite(options))
const minutes = ((performance.now() - started) / 60_000).toFixed(1)
options.log(`\nwhere the kills landed (${minutes} min):`)
for (const [key, count] of Object.entries(result.stats).sort(([a], [b]) => a.localeCompare(b))) {
  options.log(`  ${key}: ${count}`)
}
if (result.failures.length > 0) {
  options.log(`\nfailures:`)
  for (const f of result.failures) options.log(`  ${f.label}: ${f.error ?? ""}`)
}
const missing = options.iterations - result.passed - result.failed
options.log(`\n${result.passed} passed, ${result.failed + missing} failed`)
process.exitCode = result.failed + missing > 0 ? 1 : 0
