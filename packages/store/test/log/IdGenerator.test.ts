import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { IdGenerator, sequentialIds } from "../../src/log/IdGenerator.ts"

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/

describe("IdGenerator", () => {
  it.effect("the default source yields random v4 UUIDs", () =>
    Effect.gen(function*() {
      const ids = yield* IdGenerator
      const a = ids.uuid()
      const b = ids.uuid()
      assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.notStrictEqual(a, b)
    }))

  it.effect("sequentialIds yields distinct, deterministic UUID-shaped ids across digit boundaries", () =>
    Effect.sync(() => {
      const source = sequentialIds(0xfff0)
      const ids = Array.from({ length: 64 }, () => source.uuid())
      for (const id of ids) assert.match(id, UUID_V4)
      assert.strictEqual(new Set(ids).size, ids.length)
      assert.deepStrictEqual(Array.from({ length: 64 }, sequentialIds(0xfff0).uuid), ids)
    }))
})
