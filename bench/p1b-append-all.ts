/**
 * P1b — batch append (README.md#performance, goal ≥ 0.8). Measured: inside one open turn (opened
 * and made durable before the timer starts), one `appendAll` of the same N typed in-turn events
 * P1 uses — one permit, one clock read, canonical encode and lifecycle reduce per event, one
 * buffer — followed by one `flush`. Baseline: P1's, `JSON.stringify` of the same envelopes,
 * 64 KiB `writeSync` chunks, one fdatasync. Ratio = baseline time ÷ Logbook time.
 */
import { EventLog } from "@logbook/store"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { appendBaseline } from "./baselines/append.ts"
import type { BenchContext } from "./lib/context.ts"
import { lineBytes, makeInTurnEvents, makeTurns } from "./lib/events.ts"
import { sessionDir } from "./lib/fixtures.ts"
import { runStore, uncapped } from "./lib/logbook.ts"
import type { Outcome, Sample } from "./lib/measure.ts"
import { alternate, mbps, ms, rate } from "./lib/measure.ts"

/** Runs P1b and prints its medians. */
export const runP1b = async (ctx: BenchContext): Promise<Outcome> => {
  const n = ctx.profile.p1Events
  const events = makeInTurnEvents(1, n)
  const first = makeTurns(1, 1)[0]?.[0]
  if (first === undefined) throw new Error("no turn.started generated")
  const bytes = lineBytes(events)
  const sessionsDir = Path.join(ctx.root, "p1b")

  const logbook = (round: number): Promise<Sample> => {
    const sessionId = `p1b-logbook-${round}`
    return runStore(Effect.gen(function*() {
      const log = yield* EventLog.open({ sessionsDir, sessionId, ...uncapped })
      yield* log.append(first)
      yield* log.flush
      const t0 = performance.now()
      yield* log.appendAll(events)
      const t1 = performance.now()
      yield* log.flush
      const t2 = performance.now()
      return { total: t2 - t0, append: t1 - t0 }
    })).finally(() => Fs.rmSync(sessionDir(sessionsDir, sessionId), { recursive: true, force: true }))
  }

  const baseline = (round: number): Promise<Sample> => {
    const dir = Path.join(sessionsDir, `baseline-${round}`)
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const sample = appendBaseline(Path.join(dir, "events.jsonl"), first, events)
    Fs.rmSync(dir, { recursive: true, force: true })
    return Promise.resolve(sample)
  }

  const { logbook: l, baseline: b } = await alternate(ctx.profile, logbook, baseline)
  const ratio = b.total / l.total
  console.log(
    `P1b batch append: ${n} in-turn events (${(bytes / 1e6).toFixed(1)} MB) in one appendAll + 1 flush`
  )
  console.log(
    `  logbook  ${ms(l.total)}  ${rate(n, l.total, "events")}  ${mbps(bytes, l.total)}  (appendAll alone ${
      ms(l["append"] ?? NaN)
    })`
  )
  console.log(
    `  baseline ${ms(b.total)}  ${rate(n, b.total, "events")}  ${mbps(bytes, b.total)}  (appends alone ${
      ms(b["append"] ?? NaN)
    })`
  )
  console.log(`  ratio ${ratio.toFixed(2)}; goal ≥ 0.8`)
  return { id: "P1b", value: ratio, text: ratio.toFixed(2), goal: "≥ 0.8", met: ratio >= 0.8 }
}
