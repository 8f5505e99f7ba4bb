/**
 * How the benchmarks drive Logbook: the store's real Node layers, built fresh for each run
 * so no session state (RcMap entry, open handle, lock) survives from one round into the next.
 */
import { EventLog, SessionFs, SessionRegistry } from "@logbook/store"
import { Effect, Layer } from "effect"
import type { Scope } from "effect"

/** The real file system and a registry over it. */
export const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

/** Runs `effect` in its own scope with a fresh store layer; handles opened inside are closed at the end. */
export const runStore = <A, E>(effect: Effect.Effect<A, E, SessionRegistry | SessionFs | Scope.Scope>): Promise<A> =>
  Effect.runPromise(effect.pipe(Effect.scoped, Effect.provide(storeLayer)))

/** Options every benchmark opens with: no caps, so no eviction ever runs inside a measurement. */
export const uncapped = { maxEvents: 0, maxBytes: 0 } as const

/** What a timed open saw. */
export interface OpenSample {
  /** Milliseconds spent in `EventLog.open` (closing is not timed). */
  readonly ms: number
  readonly eventCount: number
  readonly turnCount: number
}

/** Opens a session, timing `EventLog.open` only, reads its counters, and closes it. */
export const timedOpen = (sessionsDir: string, sessionId: string): Promise<OpenSample> =>
  runStore(Effect.gen(function*() {
    const t0 = performance.now()
    const log = yield* EventLog.open({ sessionsDir, sessionId, ...uncapped })
    const elapsed = performance.now() - t0
    const manifest = yield* log.manifest
    return { ms: elapsed, eventCount: manifest.event_count, turnCount: manifest.turn_count }
  }))
