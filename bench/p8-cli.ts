/**
 * P8 — CLI start (README.md#performance, goals: wall time ≤ 2.5 × `node -e 0`, peak RSS ≤ 80 MiB).
 * Measured: whole `logbook show <session>` and `logbook sessions` processes started through
 * `packages/runtime/bin/logbook.js`, as a user's `logbook` runs it (the bundle `npm run build`
 * writes, while fresh), on a small store of 20 turns; baseline: `node -e 0` with the same Node.
 * For comparison `show` also runs unbundled (`dist/bin.js`, what `tsc -b` alone builds). The three commands run alternately, rotating which
 * goes first, after one unmeasured round that also fills the compile caches (the bundle's in the
 * user's cache directory, Node's for the rest). Wall time is the median per command; peak RSS
 * and the CPU time (user + system, a steadier figure on a busy machine) come from `/usr/bin/time`
 * when it exists.
 */
import { EventLog } from "@logbook/store"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import { makeTurns } from "./lib/events.ts"
import { runStore, uncapped } from "./lib/logbook.ts"
import type { Outcome } from "./lib/measure.ts"
import { median, ms, note } from "./lib/measure.ts"

const RUNTIME = Path.join(import.meta.dirname, "..", "packages", "runtime")
const BIN = Path.join(RUNTIME, "bin", "logbook.js")
const COMPILED = Path.join(RUNTIME, "dist", "bin.js")
const BUNDLED = Path.join(RUNTIME, "dist", "bundle", "bin.js")
const TIME = "/usr/bin/time"

interface Run {
  readonly ms: number
  readonly maxRssKb: number | undefined
  /** User + system CPU time (10 ms resolution): steadier than wall time on a busy machine. */
  readonly cpuMs: number | undefined
}

/** Runs one process to its end; wall time around the spawn, peak RSS and CPU time from `/usr/bin/time`. */
const timed = (argv: ReadonlyArray<string>, rssFile: string): Run => {
  const withTime = Fs.existsSync(TIME)
  const [command, ...args] = withTime ? [TIME, "-o", rssFile, "-f", "%M %U %S", ...argv] : argv
  if (command === undefined) throw new Error("empty command")
  const t0 = performance.now()
  const child = spawnSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  const elapsed = performance.now() - t0
  if (child.status !== 0) {
    throw new Error(`P8: ${argv.join(" ")} exited ${child.status}: ${child.stderr.slice(-2000)}`)
  }
  const [rss = NaN, user = NaN, system = NaN] = withTime
    ? (Fs.readFileSync(rssFile, "utf8").trim().split("\n").at(-1) ?? "").split(" ").map(Number)
    : []
  return {
    ms: elapsed,
    maxRssKb: Number.isFinite(rss) ? rss : undefined,
    cpuMs: Number.isFinite(user + system) ? (user + system) * 1000 : undefined
  }
}

const mib = (kb: number | undefined): string => kb === undefined ? "n/a" : `${(kb / 1024).toFixed(0)} MiB`

/** Runs P8 and prints its medians. */
export const runP8 = async (ctx: BenchContext): Promise<Outcome> => {
  if (!Fs.existsSync(COMPILED)) throw new Error(`P8 needs the built CLI (${COMPILED}): run \`npm run build\` first`)
  if (!Fs.existsSync(BUNDLED)) note(`  no bundle at ${BUNDLED}: logbook runs unbundled; \`npm run build\` makes it`)
  const sessionsDir = Path.join(ctx.root, "p8")
  const sessionId = "p8-small"
  await runStore(Effect.gen(function*() {
    const log = yield* EventLog.open({ sessionsDir, sessionId, ...uncapped })
    for (const turn of makeTurns(8, 20)) yield* log.appendAll(turn)
  }))
  const rssFile = Path.join(ctx.root, "p8-rss.txt")
  const node = process.execPath
  const commands: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["node -e 0", [node, "-e", "0"]],
    ["logbook show", [node, BIN, "--sessions-dir", sessionsDir, "show", sessionId]],
    ["logbook sessions", [node, BIN, "--sessions-dir", sessionsDir, "sessions"]],
    ["show, unbundled", [node, COMPILED, "--sessions-dir", sessionsDir, "show", sessionId]]
  ]
  const rounds = ctx.profile.quick ? 5 : 11
  const runs: Array<Array<Run>> = commands.map(() => [])
  for (let round = 0; round <= rounds; round++) {
    for (let k = 0; k < commands.length; k++) {
      const index = (round + k) % commands.length
      const entry = commands[index]
      if (entry === undefined) continue
      const run = timed(entry[1], rssFile)
      if (round > 0) runs[index]?.push(run)
    }
  }
  const wall = runs.map((r) => median(r.map((x) => x.ms)))
  const peak = runs.map((r) => {
    const values = r.flatMap((x) => x.maxRssKb === undefined ? [] : [x.maxRssKb])
    return values.length === 0 ? undefined : Math.max(...values)
  })
  const cpu = runs.map((r) => {
    const values = r.flatMap((x) => x.cpuMs === undefined ? [] : [x.cpuMs])
    return values.length === 0 ? NaN : median(values)
  })
  const [base = NaN, show = NaN, sessions = NaN, unbundled = NaN] = wall
  const showRatio = show / base
  const sessionsRatio = sessions / base
  const worstRatio = Math.max(showRatio, sessionsRatio)
  const cliPeaks = peak.slice(1, 3).flatMap((p) => p === undefined ? [] : [p])
  const worstPeakKb = cliPeaks.length === 0 ? undefined : Math.max(...cliPeaks)
  console.log(`P8 CLI start: whole processes on a 20-turn store, ${rounds} alternating rounds (median wall, peak RSS)`)
  commands.forEach(([name], i) => {
    console.log(`  ${name.padEnd(18)} ${ms(wall[i] ?? NaN)}  cpu ${ms(cpu[i] ?? NaN)}  peak ${mib(peak[i])}`)
  })
  console.log(
    `  ratio show ${showRatio.toFixed(2)}, sessions ${sessionsRatio.toFixed(2)} (show unbundled ${
      (unbundled / base).toFixed(2)
    }); goal ≤ 2.5; peak RSS ${mib(worstPeakKb)}, goal ≤ 80 MiB`
  )
  const [baseCpu = NaN, showCpu = NaN, sessionsCpu = NaN] = cpu
  if (Number.isFinite(baseCpu)) {
    console.log(
      `  CPU time ratio show ${(showCpu / baseCpu).toFixed(2)}, sessions ${
        (sessionsCpu / baseCpu).toFixed(2)
      } (for a busy machine, where wall times wait for a core)`
    )
  }
  const rssMet = worstPeakKb === undefined || worstPeakKb / 1024 <= 80
  return {
    id: "P8",
    value: worstRatio,
    text: `${worstRatio.toFixed(2)} (${mib(worstPeakKb)})`,
    goal: "≤ 2.5, ≤ 80 MiB",
    met: worstRatio <= 2.5 && rssMet
  }
}
