/**
 * The bundled CLI (`dist/bundle/bin.js`, written by `npm run build`; what `logbook` runs while it
 * is fresh) behaves like the compiled one: the same output and exit codes for reads, not-found
 * and usage errors, and its write path (session lock addon included) records a session that
 * verifies.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import type { RunResult } from "./harness.ts"
import { assertBuilt, BIN, run, workspace } from "./harness.ts"

const BUNDLE = fileURLToPath(new URL("../../dist/bundle/bin.js", import.meta.url))
const STAMP = fileURLToPath(new URL("../../dist/.tsbuildinfo", import.meta.url))

/** Fails early, with the fix, when the bundle is missing or older than the last `tsc -b`. */
const assertBundled = (): void => {
  assertBuilt()
  if (!fs.existsSync(BUNDLE) || fs.statSync(BUNDLE).mtimeMs < fs.statSync(STAMP).mtimeMs) {
    throw new Error(`the CLI bundle is missing or older than the build: run \`npm run build\` (\`npm test\` does)`)
  }
}

/** Runs the bundle with `args` in `cwd`; its own path in the output reads as the compiled one's. */
const runBundle = (args: ReadonlyArray<string>, cwd: string): Effect.Effect<RunResult> =>
  Effect.callback<RunResult>((resume) => {
    const env: NodeJS.ProcessEnv = { ...process.env }
    delete env.LOGBOOK_SESSIONS_DIR
    const child = spawn(process.execPath, [BUNDLE, ...args], { cwd, env, stdio: "pipe" })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", (error) => resume(Effect.die(error)))
    const same = (text: string) => text.replaceAll("dist/bundle/bin.js", "dist/bin.js")
    child.on(
      "close",
      (code, signal) => resume(Effect.succeed({ code, signal, stdout: same(stdout), stderr: same(stderr) }))
    )
    child.stdin.end("")
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("the bundled CLI", () => {
  it.effect("answers reads, not-found and usage errors exactly like the compiled CLI", () =>
    Effect.gen(function*() {
      assertBundled()
      const ws = yield* workspace
      const demo = yield* run(["demo", "--session", "bundle-demo", "--turns", "2"], { cwd: ws })
      assert.strictEqual(demo.code, 0, demo.stderr)
      const cases: ReadonlyArray<ReadonlyArray<string>> = [
        ["sessions"],
        ["show", "bundle-demo"],
        ["verify", "bundle-demo"],
        ["show", "no-such-session"],
        ["turn", "bundle-demo", "not-a-number"]
      ]
      const codes: Array<number | null> = []
      for (const args of cases) {
        const compiled = yield* run(args, { cwd: ws })
        const bundled = yield* runBundle(args, ws)
        assert.deepStrictEqual(bundled, compiled, args.join(" "))
        codes.push(bundled.code)
      }
      assert.deepStrictEqual(codes, [0, 0, 0, 3, 2])
    }), { timeout: 120_000 })

  it.effect("records a session through its write path that the compiled CLI verifies", () =>
    Effect.gen(function*() {
      assertBundled()
      const ws = yield* workspace
      const demo = yield* runBundle(["demo", "--session", "written-by-bundle", "--turns", "2"], ws)
      assert.strictEqual(demo.code, 0, demo.stderr)
      const verify = yield* run(["verify", "written-by-bundle"], { cwd: ws })
      assert.strictEqual(verify.code, 0, verify.stdout + verify.stderr)
      assert.isTrue(fs.existsSync(BIN))
    }), { timeout: 120_000 })
})
