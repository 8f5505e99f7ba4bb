/**
 * A value the server keeps and recomputes in the background (stale-while-revalidate): the first
 * read computes it and waits; later reads return the value held at once and, when it is older
 * than the refresh interval, start one recomputation in the background. The listing of a store
 * of 20 000 sessions takes seconds to re-read; a page must not.
 *
 * **Gotchas**: a reader may see a value up to one refresh old (the interval, or five times the
 * last computation when that is longer, so a slow store is not re-read back to back); a failed
 * background recomputation keeps the value held and is retried at the next due read.
 */
import type { Scope } from "effect"
import { Clock, Effect, Option, Ref, Semaphore } from "effect"

/** A value recomputed in the background; see the module comment. */
export interface Revalidating<A, E> {
  /** The value held (computed on the first read), starting a background refresh when it is due. */
  readonly get: Effect.Effect<A, E>
}

interface Held<A> {
  readonly value: Option.Option<A>
  readonly at: number
  readonly cost: number
  readonly refreshing: boolean
}

/** Makes a {@link Revalidating} value of `compute`, refreshed at most every `intervalMs`; refreshes run in the current scope. */
export const makeRevalidating = <A, E>(
  compute: Effect.Effect<A, E>,
  intervalMs: number
): Effect.Effect<Revalidating<A, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const state = yield* Ref.make<Held<A>>({ value: Option.none(), at: 0, cost: 0, refreshing: false })
    const first = yield* Semaphore.make(1)
    const timed = Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const value = yield* compute
      const end = yield* Clock.currentTimeMillis
      yield* Ref.set(state, { value: Option.some(value), at: end, cost: end - start, refreshing: false })
      return value
    })
    const refreshInBackground = timed.pipe(
      Effect.catchCause(() => Ref.update(state, (s) => ({ ...s, refreshing: false }))),
      Effect.forkIn(scope),
      Effect.asVoid
    )
    const get = Effect.gen(function*() {
      const held = yield* Ref.get(state)
      if (Option.isNone(held.value)) {
        return yield* first.withPermit(Effect.gen(function*() {
          const again = yield* Ref.get(state)
          return Option.isSome(again.value) ? again.value.value : yield* timed
        }))
      }
      const now = yield* Clock.currentTimeMillis
      const due = !held.refreshing && now - held.at >= Math.max(intervalMs, 5 * held.cost)
      if (due) {
        yield* Ref.set(state, { ...held, refreshing: true })
        yield* refreshInBackground
      }
      return held.value.value
    })
    return { get }
  })
