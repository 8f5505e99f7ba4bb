/**
 * End-to-end harness of the `logbook` CLI tests: runs the built binary (`dist/bin.js`, produced
 * by `tsc -b`, which `npm test` runs first) as a child process in a temporary workspace and
 * collects its exit code and output — or, through {@link runHere}, the same command in-process
 * (most tests: no Node start-up per invocation, so they hold on a busy machine). Also
 * hand-written session fixtures.
 */
import { bareTurnsJsonl, plantSession as plantInto, tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import type { Scope } from "effect"
import { spawn } from "node:child_process"
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { logbook } from "./inProcess.ts"

/** The built CLI entry point. */
export const BIN = fileURLToPath(new URL("../../dist/bin.js", import.meta.url))

const SRC = fileURLToPath(new URL("../../src", import.meta.url))
const DIST = fileURLToPath(new URL("../../dist", import.meta.url))

/** The CLI's sources. */
const cliSources = (): Array<string> =>
  ["Cli.ts", "bin.ts", ...fs.readdirSync(path.join(SRC, "cli")).map((f) => `cli/${f}`)]
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.join(SRC, f))

/**
 * Fails early, with the fix, when the binary is missing or a CLI source changed after the last
 * build. The build info is the stamp: `tsc -b` rewrites it on every build, but leaves an emitted
 * file untouched when its content did not change.
 */
export const assertBuilt = (): void => {
  const stamp = path.join(DIST, ".tsbuildinfo")
  const built = fs.existsSync(stamp) && fs.existsSync(BIN) ? fs.statSync(stamp).mtimeMs : 0
  const stale = cliSources().filter((src) => fs.statSync(src).mtimeMs > built)
  if (built === 0 || stale.length > 0) {
    throw new Error(
      `the built CLI is missing or older than ${stale.join(", ") || BIN}: run \`npx tsc -b\` first (\`npm test\` does)`
    )
  }
}

/** What one run of the binary did. */
export interface RunResult {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Options of {@link run}. */
export interface RunOptions {
  readonly cwd: string
  /** Written to stdin, which is then closed (default: closed at once). */
  readonly input?: string
  /** Extra environment variables (`LOGBOOK_SESSIONS_DIR` is cleared unless given here). */
  readonly env?: Record<string, string>
}

const childEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra }
  if (extra.LOGBOOK_SESSIONS_DIR === undefined) delete env.LOGBOOK_SESSIONS_DIR
  return env
}

const start = (args: ReadonlyArray<string>, options: RunOptions): ChildProcessWithoutNullStreams =>
  spawn(process.execPath, [BIN, ...args], { cwd: options.cwd, env: childEnv(options.env), stdio: "pipe" })

/** Runs `logbook <args>` to completion. */
export const run = (args: ReadonlyArray<string>, options: RunOptions): Effect.Effect<RunResult> =>
  Effect.callback<RunResult>((resume) => {
    const child = start(args, options)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", (error) => resume(Effect.die(error)))
    child.on("close", (code, signal) => resume(Effect.succeed({ code, signal, stdout, stderr })))
    child.stdin.end(options.input ?? "")
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/**
 * Runs `logbook <args>` in-process as if started in `options.cwd` (which becomes `--workspace`
 * unless the arguments name one), with the same output and exit code as {@link run}.
 */
export const runHere = (args: ReadonlyArray<string>, options: RunOptions): Effect.Effect<RunResult> =>
  Effect.map(
    logbook(args.includes("--workspace") ? args : ["--workspace", options.cwd, ...args], {
      ...(options.input === undefined ? {} : { input: options.input }),
      ...(options.env === undefined ? {} : { env: options.env })
    }),
    (r) => ({ code: r.exitCode, signal: null, stdout: r.stdout, stderr: r.stderr })
  )

/** A long-running child (`events --follow`): its output so far, and a way to stop it. */
export interface Background {
  readonly stdout: () => string
  readonly stderr: () => string
  /** Sends `signal` and waits for the exit. */
  readonly stop: (signal: NodeJS.Signals) => Effect.Effect<RunResult>
}

/** Starts `logbook <args>` in the background; it is killed when the scope closes. */
export const runInBackground = (
  args: ReadonlyArray<string>,
  options: RunOptions
): Effect.Effect<Background, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = start(args, options)
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
      const exited = new Promise<RunResult>((resolve) =>
        child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
      )
      const stop = (signal: NodeJS.Signals) =>
        Effect.promise(() => {
          child.kill(signal)
          return exited
        })
      return { child, background: { stdout: () => stdout, stderr: () => stderr, stop } }
    }),
    ({ child }) => Effect.sync(() => child.kill("SIGKILL"))
  ).pipe(Effect.map(({ background }) => background))

/**
 * Polls until `check` holds; dies after a generous bound (`polls` of 20 ms, default 1000, and
 * longer on a busy machine since each wait is at least 20 ms) — never a timing assertion.
 */
export const eventually = (what: string, check: () => boolean, polls = 1000) =>
  Effect.gen(function*() {
    for (let i = 0; i < polls; i++) {
      if (check()) return
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

/** A fresh temporary workspace, removed with the scope. */
export const workspace: Effect.Effect<string, never, Scope.Scope> = tempDir("cli")

/** `<workspace>/.logbook/sessions`. */
export const sessionsOf = (ws: string): string => path.join(ws, ".logbook", "sessions")

/** The lines of a JSONL output, parsed. */
export const jsonLines = (text: string): Array<Record<string, unknown>> =>
  text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, unknown>)

/** Token usage for hand-written `turn.completed` lines. */
export { usage } from "@logbook/testkit"

/** JSONL of `n` bare turns: started, one agent message, completed. */
export const bareTurns = bareTurnsJsonl

/** Writes a session directory by hand: a manifest with the given fields (and no log). */
export const plantSession = (ws: string, name: string, fields: Record<string, unknown>): void =>
  void plantInto(sessionsOf(ws), name, { manifest: fields })
