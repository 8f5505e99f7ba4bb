/**
 * P5w — P5 counted whole (README.md#performance, goal < 150 MB per process): the `logbook` a
 * user runs (`packages/runtime/bin/logbook.js`) on the large log (1 GB; 100 MB with `--quick`),
 * each command a whole process timed by wall clock with its peak RSS from `/usr/bin/time`:
 * the first open for writing without metadata (`append` with empty stdin after `manifest.json`
 * and `index/` were deleted: a rescan and a rebuild), `verify`, then `turn <s> 100000` (the
 * middle turn when the log has fewer) and `show <s>` with valid metadata. `turn` and `show` are
 * also run on a 1 MB log, alternately, to give the "at most 3× a 1 MB log" ratios (medians).
 * The run leaves the large log's metadata valid, as P5 does.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import { writeLogFixture } from "./lib/fixtures.ts"
import type { Outcome } from "./lib/measure.ts"
import { median, note, size } from "./lib/measure.ts"

const BIN = Path.join(import.meta.dirname, "..", "packages", "runtime", "bin", "logbook.js")
const TIME = "/usr/bin/time"
const GOAL_MB = 150
const GOAL_RATIO = 3

interface Run {
  readonly ms: number
  readonly maxRssKb: number | undefined
}

/** Runs `logbook <args>` to its end (stdin empty); wall time around the spawn, peak RSS from `/usr/bin/time -f %M`. */
const logbook = (args: ReadonlyArray<string>, rssFile: string): Run => {
  const argv = [process.execPath, BIN, ...args]
  const withTime = Fs.existsSync(TIME)
  const [command, ...rest] = withTime ? [TIME, "-o", rssFile, "-f", "%M", ...argv] : argv
  if (command === undefined) throw new Error("empty command")
  const t0 = performance.now()
  const child = spawnSync(command, rest, { stdio: ["ignore", "ignore", "pipe"], maxBuffer: 64 * 1024 * 1024 })
  const elapsed = performance.now() - t0
  if (child.status !== 0) {
    throw new Error(`P5w: logbook ${args.join(" ")} exited ${child.status}: ${child.stderr.toString().slice(-2000)}`)
  }
  const rss = withTime ? Number.parseInt(Fs.readFileSync(rssFile, "utf8").trim().split("\n").at(-1) ?? "", 10) : NaN
  return { ms: elapsed, maxRssKb: Number.isFinite(rss) ? rss : undefined }
}

const mib = (kb: number | undefined): string => kb === undefined ? "n/a" : `${(kb / 1024).toFixed(0)} MiB`
const secs = (ms: number): string => `${(ms / 1000).toFixed(2)} s`

/** Runs P5w and prints one line per command. */
export const runP5w = async (ctx: BenchContext): Promise<Outcome> => {
  const log = ctx.bigLog()
  const rssFile = Path.join(ctx.root, "p5w-rss.txt")
  const dirArgs = ["--sessions-dir", log.sessionsDir]
  const small = writeLogFixture(Path.join(ctx.root, "p5w-small"), "small-session", ctx.profile.p3SmallBytes, 7)
  const smallArgs = ["--sessions-dir", small.sessionsDir]
  logbook([...smallArgs, "append", small.sessionId], rssFile)

  Fs.rmSync(log.manifestPath, { force: true })
  Fs.rmSync(Path.join(log.dir, "index"), { recursive: true, force: true })
  note(`  first open of ${size(log.bytes)} without metadata …`)
  const open = logbook([...dirArgs, "append", log.sessionId], rssFile)
  note("  verify …")
  const verify = logbook([...dirArgs, "verify", log.sessionId], rssFile)
  const turnNumber = log.turns >= 100_000 ? 100_000 : Math.max(1, log.turns >> 1)
  const turn = logbook([...dirArgs, "turn", log.sessionId, String(turnNumber)], rssFile)
  const show = logbook([...dirArgs, "show", log.sessionId], rssFile)

  // turn and show on both logs, alternately; medians of the wall times.
  const walls = {
    bigTurn: [turn.ms],
    bigShow: [show.ms],
    smallTurn: [] as Array<number>,
    smallShow: [] as Array<number>
  }
  const smallTurn = String(Math.max(1, small.turns >> 1))
  for (let round = 0; round < ctx.profile.rounds; round++) {
    walls.smallTurn.push(logbook([...smallArgs, "turn", small.sessionId, smallTurn], rssFile).ms)
    walls.smallShow.push(logbook([...smallArgs, "show", small.sessionId], rssFile).ms)
    if (round > 0) {
      walls.bigTurn.push(logbook([...dirArgs, "turn", log.sessionId, String(turnNumber)], rssFile).ms)
      walls.bigShow.push(logbook([...dirArgs, "show", log.sessionId], rssFile).ms)
    }
  }
  const turnRatio = median(walls.bigTurn) / median(walls.smallTurn)
  const showRatio = median(walls.bigShow) / median(walls.smallShow)

  console.log(`P5w whole logbook processes on a ${size(log.bytes)} log (${log.turns} turns, ${log.events} events)`)
  const rows: ReadonlyArray<readonly [string, Run]> = [
    ["first open without metadata (append: rescan + rebuild)", open],
    ["verify", verify],
    [`turn <s> ${turnNumber} (valid metadata)`, turn],
    ["show <s> (valid metadata)", show]
  ]
  for (const [label, run] of rows) {
    console.log(`  ${label.padEnd(56)} ${secs(run.ms).padStart(8)}  ${mib(run.maxRssKb)}`)
  }
  console.log(
    `  vs a ${size(small.bytes)} log (medians of ${ctx.profile.rounds}): turn ${secs(median(walls.bigTurn))} / ${
      secs(median(walls.smallTurn))
    } = ${turnRatio.toFixed(2)}, show ${secs(median(walls.bigShow))} / ${secs(median(walls.smallShow))} = ${
      showRatio.toFixed(2)
    }; goal ≤ ${GOAL_RATIO}`
  )
  const peaks = rows.map(([, run]) => run.maxRssKb ?? Number.NaN)
  const peakMb = Math.max(...peaks) / 1024
  const rssMet = Number.isFinite(peakMb) && peakMb < GOAL_MB
  return {
    id: "P5w",
    value: peakMb,
    text: `${peakMb.toFixed(0)} MiB max (open ${mib(open.maxRssKb)}, verify ${mib(verify.maxRssKb)}, turn ${
      mib(turn.maxRssKb)
    }, show ${mib(show.maxRssKb)}); turn ×${turnRatio.toFixed(2)}, show ×${showRatio.toFixed(2)}`,
    goal: `< ${GOAL_MB} MB each; turn, show ≤ ${GOAL_RATIO}× a 1 MB log`,
    met: rssMet && turnRatio <= GOAL_RATIO && showRatio <= GOAL_RATIO
  }
}
