/**
 * The server's stale-while-revalidate values: the first read computes and waits, later reads get
 * the held value at once, a due read starts one background refresh whose result the next read
 * sees, a slow computation spaces its refreshes out, and a failed refresh keeps the value held.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import { makeRevalidating } from "../../src/serve/Revalidating.ts"

describe("Revalidating", () => {
  it.effect("the first read computes; reads within the interval reuse it; a due read refreshes in the background", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const value = yield* makeRevalidating(Ref.updateAndGet(runs, (n) => n + 1), 1000)
      assert.strictEqual(yield* value.get, 1)
      assert.strictEqual(yield* value.get, 1)
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(yield* value.get, 1)
      assert.strictEqual(yield* Ref.get(runs), 1)
      yield* TestClock.adjust("1 millis")
      // Due: the held value is returned, the refresh runs in the background.
      assert.strictEqual(yield* value.get, 1)
      yield* Effect.yieldNow
      assert.strictEqual(yield* Ref.get(runs), 2)
      assert.strictEqual(yield* value.get, 2)
    }))

  it.effect("a slow computation is refreshed at most every five times its cost", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const slow = Effect.andThen(Effect.sleep("1 second"), Ref.updateAndGet(runs, (n) => n + 1))
      const value = yield* makeRevalidating(slow, 100)
      const first = yield* Effect.forkChild(value.get)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(first), 1)
      yield* TestClock.adjust("4 seconds")
      yield* value.get
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Ref.get(runs), 1, "not due before 5 s (five times its 1 s cost)")
      yield* TestClock.adjust("1 second")
      yield* value.get
      yield* Effect.yieldNow
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Ref.get(runs), 2)
    }))

  it.effect("a failed refresh keeps the value held and is retried at the next due read", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const flaky = Effect.flatMap(Ref.updateAndGet(runs, (n) => n + 1), (n) =>
        n === 2 ? Effect.fail("boom") : Effect.succeed(n))
      const value = yield* makeRevalidating(flaky, 10)
      assert.strictEqual(yield* value.get, 1)
      yield* TestClock.adjust("10 millis")
      assert.strictEqual(yield* value.get, 1)
      yield* Effect.yieldNow
      assert.strictEqual(yield* value.get, 1, "the failed refresh left the value")
      yield* Effect.yieldNow
      assert.strictEqual(yield* value.get, 3)
    }))
})
