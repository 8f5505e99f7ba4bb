/**
 * P3 — open with valid metadata (README.md#performance, goal: time ratio ≤ 1.5, i.e. O(1) in the log
 * size). Both logs get their manifest and turn index from one earlier open (a rescan, or
 * P5's child); then opens of the large log (1 GB; 100 MB with `--quick`) and of a 1 MB log
 * alternate. Each open must take the fast path: the manifest's inode must not change
 * (a rescan republishes it through an atomic rename). Ratio = median time(large) ÷ median
 * time(1 MB). There is no baseline: the goal is the ratio itself.
 */
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import type { LogFixture } from "./lib/fixtures.ts"
import { inodeOf, writeLogFixture } from "./lib/fixtures.ts"
import { timedOpen } from "./lib/logbook.ts"
import type { Outcome } from "./lib/measure.ts"
import { collectGarbage, median, ms, note, size } from "./lib/measure.ts"

const ensureMetadata = async (log: LogFixture): Promise<void> => {
  if (inodeOf(log.manifestPath) !== undefined) return
  const t0 = performance.now()
  note(`  building metadata of the ${size(log.bytes)} log (rescan) …`)
  const opened = await timedOpen(log.sessionsDir, log.sessionId)
  if (opened.eventCount !== log.events) {
    throw new Error(`rescan counted ${opened.eventCount} events, expected ${log.events}`)
  }
  note(`  … done in ${ms(performance.now() - t0)}`)
}

/** Runs P3 and prints its medians. */
export const runP3 = async (ctx: BenchContext): Promise<Outcome> => {
  const small = writeLogFixture(Path.join(ctx.root, "p3"), "small-session", ctx.profile.p3SmallBytes, 3)
  const big = ctx.bigLog()
  await ensureMetadata(small)
  await ensureMetadata(big)
  const times = { small: [] as Array<number>, big: [] as Array<number> }
  let rescans = 0
  const openOne = async (log: LogFixture, into: Array<number> | undefined) => {
    const before = inodeOf(log.manifestPath)
    collectGarbage()
    const sample = await timedOpen(log.sessionsDir, log.sessionId)
    if (inodeOf(log.manifestPath) !== before) rescans++
    if (sample.eventCount !== log.events) {
      throw new Error(`open saw ${sample.eventCount} events, expected ${log.events}`)
    }
    into?.push(sample.ms)
  }
  await openOne(small, undefined)
  await openOne(big, undefined)
  for (let i = 0; i < ctx.profile.p3Opens; i++) {
    if (i % 2 === 0) {
      await openOne(small, times.small)
      await openOne(big, times.big)
    } else {
      await openOne(big, times.big)
      await openOne(small, times.small)
    }
  }
  const s = median(times.small)
  const b = median(times.big)
  const ratio = b / s
  console.log(
    `P3 open with valid metadata: ${size(big.bytes)} log (${big.turns} turns) vs ${
      size(small.bytes)
    } log (${small.turns} turns)`
  )
  console.log(`  ${size(big.bytes)}  ${ms(b)}  (min ${ms(Math.min(...times.big))})`)
  console.log(`  ${size(small.bytes)}  ${ms(s)}  (min ${ms(Math.min(...times.small))})`)
  console.log(`  fast path taken: ${rescans === 0 ? "every open" : `NO — ${rescans} opens rewrote the manifest`}`)
  console.log(`  time ratio ${ratio.toFixed(2)}; goal ≤ 1.5`)
  return { id: "P3", value: ratio, text: ratio.toFixed(2), goal: "≤ 1.5", met: ratio <= 1.5 && rescans === 0 }
}
