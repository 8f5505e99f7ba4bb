/**
 * Source time for the store: an imported session's `created_at`, `updated_at` and turn times must
 * be those of the source's records, not the moment of the import (docs/import.md#source-time), so
 * the importer runs the store's open, appends and completion under a Clock that reads the source
 * record's time. The store itself needs no import-specific option.
 *
 * **Gotchas**: only the wall clock is fixed; `sleep` and the monotonic clock stay the caller's, so
 * the store's retries and lock waits still pass real time.
 */
import { parseRfc3339 } from "@logbook/domain"
import { Clock, Effect } from "effect"

/** Epoch milliseconds of an RFC 3339 source timestamp, or undefined when it is not one. */
export const sourceMillis = (ts: string | undefined): number | undefined => {
  if (ts === undefined || ts.length === 0) return undefined
  const instant = parseRfc3339(ts)
  return instant === undefined ? undefined : instant.seconds * 1000 + Math.floor(instant.nanos / 1_000_000)
}

/** Runs `effect` with the wall clock reading `ts` (unchanged when `ts` is not an RFC 3339 time). */
export const atSourceTime = <A, E, R>(
  ts: string | undefined,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const ms = sourceMillis(ts)
  if (ms === undefined) return effect
  return Effect.clockWith((real) => {
    const fixed: Clock.Clock = {
      currentTimeMillisUnsafe: () => ms,
      currentTimeMillis: Effect.succeed(ms),
      currentTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
      currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
      monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: real.monotonicTimeNanos,
      sleep: (duration) => real.sleep(duration)
    }
    return Effect.provideService(effect, Clock.Clock, fixed)
  })
}
