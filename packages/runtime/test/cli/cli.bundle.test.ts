/**
 * The bundled CLI (what `npm run build` writes to `dist/bundle/` and `logbook` runs while it is
 * fresh; bundled here afresh from the built `dist/bin.js` by the same script) behaves like the
 * compiled one: the same output and exit codes for reads, not-found and usage errors, and its
 * write path (session lock addon included) records a session that verifies. Its code cache lives
 * in a private directory of the user's cache home; without a usable one it runs the same.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Scope } from "effect"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { RunResult } from "./harness.ts"
import { assertBuilt, BIN, run, workspace } from "./harness.ts"

const DIST = fileURLToPath(new URL("../../dist", import.meta.url))
const SCRIPT = fileURLToPath(new URL("../../scripts/bundle.js", import.meta.url))

/**
 * Bundles the built CLI with the build's own script into a fresh directory inside dist/ (so the
 * native addon resolves as from dist/bundle/), removed with the scope; returns its entry.
 */
const bundled: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    assertBuilt()
    const dir = fs.mkdtempSync(path.join(DIST, ".bundle-test-"))
    const built = spawnSync(process.execPath, [SCRIPT, dir], { encoding: "utf8" })
    if (built.status !== 0) throw new Error(`bundling failed: ${built.stderr}`)
    return dir
  }),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
).pipe(Effect.map((dir) => path.join(dir, "bin.js")))

/**
 * Runs the bundle `entry` with `args` in `cwd` (and `extraEnv`); its own path in the output reads
 * as the compiled one's.
 */
const runBundle = (
  entry: string,
  args: ReadonlyArray<string>,
  cwd: string,
  extraEnv: Record<string, string> = {},
  nodeArgs: ReadonlyArray<string> = []
): Effect.Effect<RunResult> =>
  Effect.callback<RunResult>((resume) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv }
    delete env.LOGBOOK_SESSIONS_DIR
    delete env.NODE_DISABLE_COMPILE_CACHE
    const child = spawn(process.execPath, [...nodeArgs, entry, ...args], { cwd, env, stdio: "pipe" })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", (error) => resume(Effect.die(error)))
    const same = (text: string) => text.replaceAll(entry, BIN)
    child.on(
      "close",
      (code, signal) => resume(Effect.succeed({ code, signal, stdout: same(stdout), stderr: same(stderr) }))
    )
    child.stdin.end("")
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/**
 * Writes a shim beside the bundle `entry`, as bin/logbook.js is: it runs `before`, loads the
 * entry, then runs `after` (`setFlagsFromString` is in scope); returns its path.
 */
const writeShim = (entry: string, name: string, before: string, after = ""): string => {
  const shim = path.join(path.dirname(entry), name)
  fs.writeFileSync(
    shim,
    `import { setFlagsFromString } from "node:v8"\n${before}` +
      `await import(${JSON.stringify(pathToFileURL(entry).href)})\n${after}`
  )
  return shim
}

/** Each code cache in `dir` with its mtime: a rejected cache is rewritten, so its line changes. */
const cacheStates = (dir: string): Array<string> =>
  fs.readdirSync(dir).filter((name) => name.endsWith(".v8cache")).sort()
    .map((name) => `${name} ${fs.statSync(path.join(dir, name)).mtimeMs}`)

/**
 * A bundle and a workspace whose runs keep their code caches in a cache home of its own: `env`
 * selects it, `caches()` lists its caches' states.
 */
const cacheSetup = Effect.gen(function*() {
  const entry = yield* bundled
  const ws = yield* workspace
  const cacheHome = path.join(ws, "cache-home")
  const dir = path.join(cacheHome, "logbook")
  return { entry, ws, env: { XDG_CACHE_HOME: cacheHome }, caches: () => cacheStates(dir) }
})

describe("the bundled CLI", () => {
  it.effect("answers reads, not-found and usage errors exactly like the compiled CLI", () =>
    Effect.gen(function*() {
      const entry = yield* bundled
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
        const fromBundle = yield* runBundle(entry, args, ws)
        assert.deepStrictEqual(fromBundle, compiled, args.join(" "))
        codes.push(fromBundle.code)
      }
      assert.deepStrictEqual(codes, [0, 0, 0, 3, 2])
    }), { timeout: 120_000 })

  it.effect("records a session through its write path that the compiled CLI verifies", () =>
    Effect.gen(function*() {
      const entry = yield* bundled
      const ws = yield* workspace
      const demo = yield* runBundle(entry, ["demo", "--session", "written-by-bundle", "--turns", "2"], ws)
      assert.strictEqual(demo.code, 0, demo.stderr)
      const verify = yield* run(["verify", "written-by-bundle"], { cwd: ws })
      assert.strictEqual(verify.code, 0, verify.stdout + verify.stderr)
    }), { timeout: 120_000 })

  it.effect(
    "keeps a private code cache in XDG_CACHE_HOME and runs the same without a usable one",
    () =>
      Effect.gen(function*() {
        const entry = yield* bundled
        const ws = yield* workspace
        const cacheHome = path.join(ws, "cache-home")
        const first = yield* runBundle(entry, ["sessions"], ws, { XDG_CACHE_HOME: cacheHome })
        assert.strictEqual(first.code, 0, first.stderr)
        const dir = path.join(cacheHome, "logbook")
        const caches = fs.readdirSync(dir).filter((name) => name.endsWith(".v8cache"))
        assert.strictEqual(caches.length, 1, fs.readdirSync(dir).join(", "))
        assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700)
        assert.strictEqual(fs.statSync(path.join(dir, caches[0] ?? "")).mode & 0o777, 0o600)
        const cached = yield* runBundle(entry, ["sessions"], ws, { XDG_CACHE_HOME: cacheHome })
        assert.deepStrictEqual(cached, first)
        // A cache home that is a regular file cannot hold the cache directory.
        const blocked = path.join(ws, "not-a-directory")
        fs.writeFileSync(blocked, "")
        const uncached = yield* runBundle(entry, ["sessions"], ws, { XDG_CACHE_HOME: blocked })
        assert.deepStrictEqual(uncached, first)
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "keeps one code cache per set of start-up V8 flags, so runs with and without them never reject each other's",
    () =>
      Effect.gen(function*() {
        const { caches, entry, env, ws } = yield* cacheSetup
        // As bin/logbook.js starts `mcp` and `serve`: heap flags set, and named, before the entry loads.
        const shim = writeShim(
          entry,
          "shim.mjs",
          `setFlagsFromString("--semi-space-growth-factor=1")\n` +
            `globalThis[Symbol.for("logbook/v8-flags-at-start")] = "--semi-space-growth-factor=1"\n`
        )
        const runs = [
          () => runBundle(entry, ["sessions"], ws, env),
          () => runBundle(shim, ["sessions"], ws, env),
          () => runBundle(entry, ["sessions"], ws, env, ["--heap-growing-percent=25"])
        ]
        for (const runOnce of runs) assert.strictEqual((yield* runOnce()).code, 0)
        const written = caches()
        assert.strictEqual(written.length, 3, written.join(", "))
        // Each set of flags reads its own cache again: none is rejected, so none is rewritten.
        for (const runOnce of [...runs, ...runs]) assert.strictEqual((yield* runOnce()).code, 0)
        assert.deepStrictEqual(caches(), written)
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "keeps a code cache per command, and of other builds only those of the two used last",
    () =>
      Effect.gen(function*() {
        const entry = yield* bundled
        const ws = yield* workspace
        const cacheHome = path.join(ws, "cache-home")
        const dir = path.join(cacheHome, "logbook")
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
        // Three other builds' caches, used one, two and three hours ago.
        const hour = 3_600_000
        const others = ["0000000000000001", "0000000000000002", "0000000000000003"].map((build, k) => {
          const file = path.join(dir, `${build}-${process.version}-${process.arch}-sessions.v8cache`)
          fs.writeFileSync(file, "", { mode: 0o600 })
          const when = new Date(Date.now() - (k + 1) * hour)
          fs.utimesSync(file, when, when)
          return path.basename(file)
        })
        const env = { XDG_CACHE_HOME: cacheHome }
        assert.strictEqual((yield* runBundle(entry, ["sessions"], ws, env)).code, 0)
        assert.strictEqual((yield* runBundle(entry, ["show", "no-such-session"], ws, env)).code, 3)
        const names = fs.readdirSync(dir).filter((name) => name.endsWith(".v8cache")).sort()
        const own = names.filter((name) => !others.includes(name))
        assert.deepStrictEqual(own.map((name) => name.slice(16)), [
          `-${process.version}-${process.arch}-sessions.v8cache`,
          `-${process.version}-${process.arch}-show.v8cache`
        ])
        assert.deepStrictEqual(names.filter((name) => others.includes(name)), others.slice(0, 2))
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "makes a code cache the next start accepts when the heap flags were set while the command ran",
    () =>
      Effect.gen(function*() {
        const { caches, entry, env, ws } = yield* cacheSetup
        // As bin/logbook.js does 50 ms into a command: heap flags set once the CLI runs, and named.
        const shim = writeShim(
          entry,
          "late-shim.mjs",
          "",
          `const flags = "--semi-space-growth-factor=1 --heap-growing-percent=25"\n` +
            `setFlagsFromString(flags)\n` +
            `globalThis[Symbol.for("logbook/v8-flags-set-late")] = ` +
            `{ flags, undo: "--semi-space-growth-factor=2 --heap-growing-percent=0" }\n`
        )
        assert.strictEqual((yield* runBundle(shim, ["sessions"], ws, env)).code, 0)
        const written = caches()
        assert.strictEqual(written.length, 1, written.join(", "))
        // A start without those flags (every command's) accepts it: it is not rewritten.
        for (let i = 0; i < 2; i++) assert.strictEqual((yield* runBundle(entry, ["sessions"], ws, env)).code, 0)
        assert.deepStrictEqual(caches(), written)
      }),
    { timeout: 120_000 }
  )

  it.effect("puts back V8's own defaults of the heap flags it sets late (what this Node's V8 reports)", () =>
    Effect.sync(() => {
      const shim = fs.readFileSync(fileURLToPath(new URL("../../bin/logbook.js", import.meta.url)), "utf8")
      const undo = /const HEAP_DEFAULTS = "([^"]+)"/u.exec(shim)?.[1]
      assert.isDefined(undo)
      const options = spawnSync(process.execPath, ["--v8-options"], { encoding: "utf8" }).stdout
      for (const flag of undo?.split(" ") ?? []) {
        const name = flag.slice(0, flag.indexOf("="))
        assert.include(options, `default: ${flag}\n`, `${name}: V8's default is not the shim's`)
      }
    }))

  // Live: it waits on the real clock for the server's timer.
  it.live(
    "writes a long-running command's code cache while it runs, before V8 drops its start-up code",
    () =>
      Effect.gen(function*() {
        const entry = yield* bundled
        const ws = yield* workspace
        const dir = path.join(ws, "cache-home", "logbook")
        const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: path.join(ws, "cache-home") }
        delete env.LOGBOOK_SESSIONS_DIR
        delete env.NODE_DISABLE_COMPILE_CACHE
        const server = yield* Effect.acquireRelease(
          Effect.sync(() =>
            spawn(process.execPath, [entry, "mcp"], { cwd: ws, env, stdio: ["pipe", "ignore", "ignore"] })
          ),
          (child) => Effect.sync(() => child.kill("SIGKILL"))
        )
        const written = () => fs.existsSync(dir) && fs.readdirSync(dir).some((name) => name.endsWith("-mcp.v8cache"))
        // The server waits on its stdin for as long as the test runs: the cache appears while it lives.
        yield* Effect.sleep("100 millis").pipe(Effect.repeat({ until: () => written() || server.exitCode !== null }))
        assert.isTrue(written())
        assert.strictEqual(server.exitCode, null)
        server.stdin.end()
      }),
    { timeout: 60_000 }
  )
})
