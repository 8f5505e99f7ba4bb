/**
 * P2 — turn commit (README.md#performance, goal ≥ 0.8). Measured: T complete turns of 20 appends each on
 * a fresh session; every `turn.completed` runs the durability barrier (bytes, fdatasync,
 * atomic `index/turns.json`, atomic `manifest.json`). Baseline: the same protocol and files
 * with raw sync syscalls (`baselines/commit.ts`). Ratio = Logbook turns/s ÷ baseline turns/s.
 */
import { EventLog } from "@logbook/store"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { openRawSession } from "./baselines/commit.ts"
import type { BenchContext } from "./lib/context.ts"
import { makeTurns, sameBytes } from "./lib/events.ts"
import { sessionDir } from "./lib/fixtures.ts"
import { runStore, uncapped } from "./lib/logbook.ts"
import type { Outcome, Sample } from "./lib/measure.ts"
import { alternate, ms, rate } from "./lib/measure.ts"

/** Runs P2 and prints its medians. */
export const runP2 = async (ctx: BenchContext): Promise<Outcome> => {
  const turns = makeTurns(2, ctx.profile.p2Turns)
  if (!sameBytes(turns.flat())) console.log("  warning: encodeLine and JSON.stringify differ on the P2 events")
  const sessionsDir = Path.join(ctx.root, "p2")

  const logbook = (round: number): Promise<Sample> => {
    const sessionId = `p2-logbook-${round}`
    return runStore(Effect.gen(function*() {
      const log = yield* EventLog.open({ sessionsDir, sessionId, ...uncapped })
      const t0 = performance.now()
      for (const turn of turns) {
        for (const event of turn) yield* log.append(event)
      }
      return { total: performance.now() - t0 }
    })).finally(() => Fs.rmSync(sessionDir(sessionsDir, sessionId), { recursive: true, force: true }))
  }

  const baseline = (round: number): Promise<Sample> => {
    const dir = Path.join(sessionsDir, `baseline-${round}`)
    const session = openRawSession(dir, `p2-baseline-${round}`)
    const t0 = performance.now()
    for (const turn of turns) {
      for (const event of turn) session.append(event)
    }
    const total = performance.now() - t0
    session.close()
    Fs.rmSync(dir, { recursive: true, force: true })
    return Promise.resolve({ total })
  }

  const { logbook: l, baseline: b } = await alternate(ctx.profile, logbook, baseline)
  const ratio = b.total / l.total
  const t = turns.length
  console.log(`P2 turn commit: ${t} turns × 20 appends, barrier at every turn.completed`)
  console.log(`  logbook  ${ms(l.total)}  ${rate(t, l.total, "turns")}  (${(l.total / t).toFixed(2)} ms/turn)`)
  console.log(`  baseline ${ms(b.total)}  ${rate(t, b.total, "turns")}  (${(b.total / t).toFixed(2)} ms/turn)`)
  console.log(`  ratio ${ratio.toFixed(2)}; goal ≥ 0.8`)
  return { id: "P2", value: ratio, text: ratio.toFixed(2), goal: "≥ 0.8", met: ratio >= 0.8 }
}
