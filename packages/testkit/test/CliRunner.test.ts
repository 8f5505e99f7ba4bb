import { assert, describe, it } from "@effect/vitest"
import { Cause, Console, Effect, Stdio, Stream } from "effect"
import { runCliInProcess } from "../src/CliRunner.ts"

const render = (cause: Cause.Cause<unknown>) => ({ text: `failed: ${String(Cause.squash(cause))}`, exitCode: 7 })

describe("runCliInProcess", () => {
  it.effect("captures stdout, stderr and console output, reading the given stdin", () =>
    Effect.gen(function*() {
      const program = Effect.gen(function*() {
        const stdio = yield* Stdio.Stdio
        const input = yield* stdio.stdin.pipe(Stream.decodeText(), Stream.mkString)
        yield* Stream.run(Stream.succeed(`got ${input}`), stdio.stdout())
        yield* Stream.run(Stream.succeed("note\n"), stdio.stderr())
        yield* Console.error("console error")
      })
      const run = yield* runCliInProcess(program, { render, stdin: "abc" })
      assert.deepStrictEqual(run, { exitCode: 0, stdout: "got abc", stderr: "note\nconsole error\n" })
    }))

  it.effect("renders a failure with the caller's renderer and returns its exit code", () =>
    Effect.gen(function*() {
      const run = yield* runCliInProcess(Effect.fail("nope"), { render })
      assert.deepStrictEqual(run, { exitCode: 7, stdout: "", stderr: "failed: nope\n" })
    }))
})
