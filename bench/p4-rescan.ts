/**
 * P4 — rescan (README.md#performance, goal ≥ 0.8). Measured: `EventLog.open` of a 100 MB log (20 MB with
 * `--quick`) whose `manifest.json` was deleted, which forces the authoritative rescan —
 * stream, split, classify every line, fold the lifecycle reducer — and then publishes fresh
 * metadata. Baseline: chunked read + split + `JSON.parse` of every line
 * (`baselines/rescan.ts`). Ratio = Logbook MB/s ÷ baseline MB/s. The file is in the page
 * cache for both sides (it was just written and is re-read every round).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { rescanBaseline } from "./baselines/rescan.ts"
import type { BenchContext } from "./lib/context.ts"
import { writeLogFixture } from "./lib/fixtures.ts"
import { timedOpen } from "./lib/logbook.ts"
import type { Outcome, Sample } from "./lib/measure.ts"
import { alternate, mbps, ms, size } from "./lib/measure.ts"

/** Runs P4 and prints its medians. */
export const runP4 = async (ctx: BenchContext): Promise<Outcome> => {
  const log = writeLogFixture(Path.join(ctx.root, "p4"), "rescan-session", ctx.profile.p4Bytes, 4)

  const logbook = async (): Promise<Sample> => {
    Fs.rmSync(log.manifestPath, { force: true })
    const sample = await timedOpen(log.sessionsDir, log.sessionId)
    if (sample.eventCount !== log.events) throw new Error(`rescan counted ${sample.eventCount}, expected ${log.events}`)
    return { total: sample.ms }
  }

  const baseline = (): Promise<Sample> => {
    const t0 = performance.now()
    const result = rescanBaseline(log.eventsPath)
    const total = performance.now() - t0
    if (result.lines !== log.events) throw new Error(`baseline parsed ${result.lines} lines, expected ${log.events}`)
    return Promise.resolve({ total })
  }

  const { logbook: l, baseline: b } = await alternate(ctx.profile, logbook, baseline)
  const ratio = b.total / l.total
  console.log(
    `P4 rescan: ${size(log.bytes)} log, ${log.events} events, ${log.turns} turns (manifest deleted before each open)`
  )
  console.log(`  logbook  ${ms(l.total)}  ${mbps(log.bytes, l.total)}`)
  console.log(`  baseline ${ms(b.total)}  ${mbps(log.bytes, b.total)}`)
  console.log(`  ratio ${ratio.toFixed(2)}; goal ≥ 0.8`)
  return { id: "P4", value: ratio, text: ratio.toFixed(2), goal: "≥ 0.8", met: ratio >= 0.8 }
}
