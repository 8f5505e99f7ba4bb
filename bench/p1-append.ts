/**
 * P1 — buffered append (README.md#performance, goal ≥ 0.5) and P1b — batch append (goal ≥ 0.8).
 * Measured: inside one open turn (opened and made durable before the timer starts, so no
 * turn-boundary barrier runs), N typed in-turn events — for P1 one `append` each, for P1b one
 * `appendAll` of all of them (one permit, one clock read) — canonical encode, lifecycle reduce,
 * copy into the 64 KiB buffer, byte writes whenever it fills; then one `flush` (write,
 * fdatasync, turn index, manifest). Baseline (both): `JSON.stringify` of the same envelopes,
 * 64 KiB `writeSync` chunks, one fdatasync. Ratio = baseline time ÷ Logbook time over appends +
 * final flush.
 */
import type { ThreadEvent } from "@logbook/domain"
import type { SessionLog } from "@logbook/store"
import { EventLog } from "@logbook/store"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { appendBaseline } from "./baselines/append.ts"
import type { BenchContext } from "./lib/context.ts"
import { lineBytes, makeInTurnEvents, makeTurns, sameBytes } from "./lib/events.ts"
import { sessionDir } from "./lib/fixtures.ts"
import { runStore, uncapped } from "./lib/logbook.ts"
import type { Outcome, Sample } from "./lib/measure.ts"
import { alternate, mbps, ms, rate } from "./lib/measure.ts"

/** What differs between P1 and P1b: how the events go in, the names and the goal. */
interface AppendVariant {
  readonly id: "P1" | "P1b"
  readonly title: string
  readonly goal: number
  readonly write: (log: SessionLog, events: ReadonlyArray<ThreadEvent>) => Effect.Effect<unknown, unknown>
}

const runAppend = async (ctx: BenchContext, variant: AppendVariant): Promise<Outcome> => {
  const n = ctx.profile.p1Events
  const events = makeInTurnEvents(1, n)
  const first = makeTurns(1, 1)[0]?.[0]
  if (first === undefined) throw new Error("no turn.started generated")
  if (!sameBytes(events)) console.log("  warning: encodeLine and JSON.stringify differ on the P1 events")
  const bytes = lineBytes(events)
  const sessionsDir = Path.join(ctx.root, variant.id.toLowerCase())

  const logbook = (round: number): Promise<Sample> => {
    const sessionId = `${variant.id.toLowerCase()}-logbook-${round}`
    return runStore(Effect.gen(function*() {
      const log = yield* EventLog.open({ sessionsDir, sessionId, ...uncapped })
      yield* log.append(first)
      yield* log.flush
      const t0 = performance.now()
      yield* variant.write(log, events)
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
  console.log(`${variant.id} ${variant.title}: ${n} in-turn events (${(bytes / 1e6).toFixed(1)} MB) + 1 flush`)
  console.log(
    `  logbook  ${ms(l.total)}  ${rate(n, l.total, "events")}  ${mbps(bytes, l.total)}  (appends alone ${
      ms(l["append"] ?? NaN)
    })`
  )
  console.log(
    `  baseline ${ms(b.total)}  ${rate(n, b.total, "events")}  ${mbps(bytes, b.total)}  (appends alone ${
      ms(b["append"] ?? NaN)
    })`
  )
  console.log(
    `  ratio ${ratio.toFixed(2)} (appends alone ${
      ((b["append"] ?? NaN) / (l["append"] ?? NaN)).toFixed(2)
    }); goal ≥ ${variant.goal}`
  )
  return { id: variant.id, value: ratio, text: ratio.toFixed(2), goal: `≥ ${variant.goal}`, met: ratio >= variant.goal }
}

/** Runs P1 (one `append` per event) and prints its medians. */
export const runP1 = (ctx: BenchContext): Promise<Outcome> =>
  runAppend(ctx, {
    id: "P1",
    title: "buffered append, inside one open turn",
    goal: 0.5,
    write: (log, events) =>
      Effect.gen(function*() {
        for (const event of events) yield* log.append(event)
      })
  })

/** Runs P1b (one `appendAll` of every event) and prints its medians. */
export const runP1b = (ctx: BenchContext): Promise<Outcome> =>
  runAppend(ctx, {
    id: "P1b",
    title: "batch append, one appendAll inside one open turn",
    goal: 0.8,
    write: (log, events) => log.appendAll(events)
  })
