/**
 * The CLI's one progress line: written through `Stdio` (never straight to `process.stderr`), at
 * most every 100 ms with the latest text, cleared at the end however the work ends, and never
 * written when stderr is not a terminal.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Sink, Stdio } from "effect"
import { TestClock } from "effect/testing"
import { withProgressLine } from "../../src/cli/Output.ts"

const capture = (terminal: boolean) => {
  const written: Array<string> = []
  const decoder = new TextDecoder()
  const layer = Stdio.layerTest({
    stderrIsTerminal: Effect.succeed(terminal),
    stderr: () =>
      Sink.forEach((chunk: string | Uint8Array) =>
        Effect.sync(() => {
          written.push(typeof chunk === "string" ? chunk : decoder.decode(chunk))
        })
      )
  })
  return { written, layer }
}

describe("withProgressLine", () => {
  it.effect("shows the latest report at each tick and clears the line at the end", () =>
    Effect.gen(function*() {
      const { layer, written } = capture(true)
      const result = yield* withProgressLine((report) =>
        Effect.gen(function*() {
          assert.isDefined(report)
          report?.("importing 1/3: a.jsonl")
          report?.("importing 2/3: b.jsonl")
          yield* TestClock.adjust("150 millis")
          report?.("importing 3/3: c.jsonl")
          yield* TestClock.adjust("150 millis")
          return 7
        })
      ).pipe(Effect.provide(layer))
      assert.strictEqual(result, 7)
      assert.deepStrictEqual(written, [
        "\r\u001b[Kimporting 2/3: b.jsonl",
        "\r\u001b[Kimporting 3/3: c.jsonl",
        "\r\u001b[K"
      ])
    }))

  it.effect("clears the line when the work fails", () =>
    Effect.gen(function*() {
      const { layer, written } = capture(true)
      const exit = yield* withProgressLine((report) =>
        Effect.gen(function*() {
          report?.("verify: 10% of 1.0 GiB")
          yield* TestClock.adjust("150 millis")
          return yield* Effect.fail("disk gone")
        })
      ).pipe(Effect.provide(layer), Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual(written, ["\r\u001b[Kverify: 10% of 1.0 GiB", "\r\u001b[K"])
    }))

  it.effect("gives no reporter and writes nothing when stderr is not a terminal", () =>
    Effect.gen(function*() {
      const { layer, written } = capture(false)
      const seen = yield* withProgressLine((report) => Effect.succeed(report === undefined)).pipe(Effect.provide(layer))
      assert.isTrue(seen)
      assert.deepStrictEqual(written, [])
    }))
})
