/**
 * P5 — peak memory (README.md#performance, goal < 150 MB). A child process (`p5-child.ts`) rescans the
 * large log (1 GB; 100 MB with `--quick`) after its manifest was deleted, then reconstructs
 * three turns; its peak RSS is the value. For context the report also gives the peak RSS of
 * the same child started with `--floor` (it loads the same modules and exits): the part of
 * the peak that is Node + type stripping + Effect + Logbook code rather than the work.
 * The child's close republishes the metadata, which P3 then opens on the fast path.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import type { Outcome } from "./lib/measure.ts"
import { mbps, ms, note, size } from "./lib/measure.ts"

interface ChildReport {
  readonly scanMs: number
  readonly reconstructMs: number
  readonly turns: number
  readonly eventCount: number
  readonly reconstructedEvents: number
  readonly maxRssKb: number
}

const CHILD = Path.join(import.meta.dirname, "p5-child.ts")

const runChild = (args: ReadonlyArray<string>): unknown => {
  const child = spawnSync(process.execPath, ["--conditions=@logbook/source", CHILD, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 16 * 1024 * 1024
  })
  const last = child.stdout.trim().split("\n").at(-1) ?? ""
  if (child.status !== 0 || !last.startsWith("{")) {
    throw new Error(`P5 child failed (status ${child.status}): ${child.stdout.slice(-2000)}`)
  }
  return JSON.parse(last)
}

/** Runs P5 and prints the child's report. */
export const runP5 = async (ctx: BenchContext): Promise<Outcome> => {
  const log = ctx.bigLog()
  const floor = runChild(["--floor"]) as { readonly maxRssKb: number }
  Fs.rmSync(log.manifestPath, { force: true })
  note(`  child rescanning ${size(log.bytes)} …`)
  const report = runChild([log.sessionsDir, log.sessionId]) as ChildReport
  if (report.eventCount !== log.events) throw new Error(`child counted ${report.eventCount}, expected ${log.events}`)
  const peakMb = report.maxRssKb / 1024
  console.log(`P5 peak RSS: child rescans a ${size(log.bytes)} log (${report.turns} turns), reconstructs 3 turns`)
  console.log(
    `  rescan ${ms(report.scanMs)} (${mbps(log.bytes, report.scanMs)}), reconstruct ${
      ms(report.reconstructMs)
    } (${report.reconstructedEvents} events)`
  )
  const floorMb = floor.maxRssKb / 1024
  console.log(
    `  peak RSS ${peakMb.toFixed(0)} MiB = runtime floor ${
      floorMb.toFixed(0)
    } MiB (same child, modules loaded, no work) + ${(peakMb - floorMb).toFixed(0)} MiB for the work; goal < 150 MB`
  )
  return { id: "P5", value: peakMb, text: peakMb.toFixed(0), goal: "< 150 MB", met: peakMb < 150 }
}
