/**
 * The `logbook` binary's error line is terminal-safe and redacted: an error naming a hostile
 * session id (an OSC 52 clipboard write and a clear-screen) shows the escapes as visible text on
 * stderr, one naming a secret shows `[REDACTED]`, and a usage error echoing an argument is safe.
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
      const secret = yield* run(["--workspace", ws, "show", "PGPASSWORD=pgpw0001"], { cwd: ws })
      assert.strictEqual(secret.code, 3, secret.stderr)
      assert.notInclude(secret.stderr, "pgpw0001")
      assert.include(secret.stderr, "PGPASSWORD=[REDACTED]")
      const usage = yield* run(["--workspace", ws, "sessions", "--limit", "x\u001b[2J"], { cwd: ws })
      assert.strictEqual(usage.code, 2, usage.stderr)
      assert.notMatch(usage.stderr, /\u001b/u)
    }), 60_000)
})
