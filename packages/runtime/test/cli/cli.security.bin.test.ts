/**
 * The `logbook` binary's error line is terminal-safe: an error naming a hostile session id
 * (an OSC 52 clipboard write and a clear-screen) shows the escapes as visible text on stderr.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { assertBuilt, run, workspace } from "./harness.ts"

describe("the binary's errors", () => {
  it.effect("show an escape sequence in a session id as text", () =>
    Effect.gen(function*() {
      assertBuilt()
      const ws = yield* workspace
      const result = yield* run(["--workspace", ws, "show", "nope\u001b]52;c;aGk=\u0007\u001b[2J"], { cwd: ws })
      assert.strictEqual(result.code, 3, result.stderr)
      assert.notMatch(result.stderr, /[\u0007\u001b]/u)
      assert.include(result.stderr, "\\x1b]52;c;aGk=\\x07")
    }), 60_000)
})
