/**
 * P10 — explanation (README.md#performance, goal ≤ 1.5). Measured: `queryExplanation` (session
 * scope) of a 100 MB log (20 MB with `--quick`) with valid metadata — one streamed pass that
 * parses every line, folds it into the explanation model and hashes the retained bytes.
 * Compared with: the rescan of the same log (`EventLog.open` with `manifest.json` deleted, as in
 * P4). Ratio = explanation time ÷ rescan time (lower is better). The file is in the page cache
 * for both sides.
 */
import { queryExplanation } from "@logbook/projections"
import { SessionFs } from "@logbook/store"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import { writeLogFixture } from "./lib/fixtures.ts"
import { timedOpen } from "./lib/logbook.ts"
import type { Outcome, Sample } from "./lib/measure.ts"
import { alternate, mbps, ms, size } from "./lib/measure.ts"

/** Runs P10 and prints its medians. */
export const runP10 = async (ctx: BenchContext): Promise<Outcome> => {
  const log = writeLogFixture(Path.join(ctx.root, "p10"), "explain-session", ctx.profile.p4Bytes, 10)
  // Publish metadata once, so the explanation reads the stored manifest (no rescan inside it).
  await timedOpen(log.sessionsDir, log.sessionId)

  const explain = async (): Promise<Sample> => {
    const t0 = performance.now()
    const model = await Effect.runPromise(
      queryExplanation(log.sessionsDir, log.sessionId, "session").pipe(Effect.provide(SessionFs.layerNode))
    )
    const total = performance.now() - t0
    if (model.actions.length === 0 || model.completeness.malformed_records !== 0) {
      throw new Error(
        `unexpected model: ${model.actions.length} actions, ${model.completeness.malformed_records} malformed`
      )
    }
    return { total }
  }

  const rescan = async (): Promise<Sample> => {
    Fs.rmSync(log.manifestPath, { force: true })
    const sample = await timedOpen(log.sessionsDir, log.sessionId)
    if (sample.eventCount !== log.events) throw new Error(`rescan counted ${sample.eventCount}, expected ${log.events}`)
    return { total: sample.ms }
  }

  const { baseline: r, logbook: e } = await alternate(ctx.profile, explain, rescan)
  const ratio = e.total / r.total
  console.log(`P10 explain: ${size(log.bytes)} log, ${log.events} events, ${log.turns} turns (session scope)`)
  console.log(`  explain  ${ms(e.total)}  ${mbps(log.bytes, e.total)}`)
  console.log(`  rescan   ${ms(r.total)}  ${mbps(log.bytes, r.total)}`)
  console.log(`  ratio ${ratio.toFixed(2)} (explain ÷ rescan); goal ≤ 1.5`)
  return { id: "P10", value: ratio, text: ratio.toFixed(2), goal: "≤ 1.5", met: ratio <= 1.5 }
}
