#!/usr/bin/env node
// The bundled CLI's entry: scripts/bundle.js copies this file to dist/bundle/bin.js, next to
// logbook.cjs (the whole CLI in one file). It compiles that file with a V8 code cache kept in
// the user's cache directory, taken after a run, so the functions a command used come compiled
// from disk next time (Node's own compile cache stores only what compiled before the code ran,
// so every run compiled the rest again). The cache is an optimisation only: without a usable
// directory, or with NODE_DISABLE_COMPILE_CACHE set, the CLI runs the same, compiled afresh.
// Gotchas: V8 checks only the source's length, so a cache is named after the source's hash
// (which scripts/bundle.js writes into BUILT below: hashing at start costs more);
// a cache is bytecode the process runs, so only a file this user owns in a directory this user
// owns, neither writable by others, is read (opened without following symbolic links).
import * as Fs from "node:fs"
import * as NodeModule from "node:module"
import { homedir, tmpdir } from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { setFlagsFromString } from "node:v8"
import * as Vm from "node:vm"

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `logbook: Node ${process.versions.node} is too old; Logbook needs Node >= 22.19 ` +
      "(inside this repository run it through npm or npx, which use the pinned Node 24)\n"
  )
  process.exit(1)
}

const uid = typeof process.getuid === "function" ? process.getuid() : undefined

/** True when `stats` belong to this user and nobody else may write them. */
const private_ = (stats) => uid === undefined || (stats.uid === uid && (stats.mode & 0o022) === 0)

/** `$XDG_CACHE_HOME/logbook`, else `~/.cache/logbook`, else a per-user directory in the temp dir. */
const cacheRoot = () => {
  const xdg = process.env.XDG_CACHE_HOME
  if (xdg !== undefined && Path.isAbsolute(xdg)) return Path.join(xdg, "logbook")
  const home = homedir()
  return home.length > 0 ? Path.join(home, ".cache", "logbook") : Path.join(tmpdir(), `logbook-${uid ?? "user"}`)
}

/** The cache directory (created 0700), or undefined when it is unusable or caching is off. */
const cacheDir = () => {
  if (process.env.NODE_DISABLE_COMPILE_CACHE !== undefined) return undefined
  try {
    const dir = cacheRoot()
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const stats = Fs.lstatSync(dir)
    return stats.isDirectory() && private_(stats) ? dir : undefined
  } catch {
    return undefined
  }
}

/** The cache file's content, or undefined when it is missing or not trusted. */
const readCache = (file) => {
  let fd
  try {
    fd = Fs.openSync(file, Fs.constants.O_RDONLY | (Fs.constants.O_NOFOLLOW ?? 0))
    const stats = Fs.fstatSync(fd)
    return stats.isFile() && private_(stats) ? Fs.readFileSync(fd) : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) Fs.closeSync(fd)
  }
}

/** How long a command runs before its cache is written (else at exit). */
const CACHE_AFTER_MS = 1000

/** Other builds (other checkouts, earlier builds) whose caches are kept besides this one's, newest first. */
const KEPT_BUILDS = 2

/**
 * Writes the cache atomically (a private temporary file renamed over it). This build's other
 * caches stay, and so do those of the {@link KEPT_BUILDS} other builds used last (several
 * checkouts may share the directory); older builds' caches are removed.
 */
const writeCache = (dir, name, data) => {
  const file = Path.join(dir, name)
  const temporary = `${file}.${process.pid}.tmp`
  try {
    Fs.writeFileSync(temporary, data, { mode: 0o600, flag: "wx" })
    Fs.renameSync(temporary, file)
    const build = name.slice(0, 16)
    const lastUsed = new Map()
    const files = Fs.readdirSync(dir)
      .filter((other) => other.endsWith(".v8cache") && other.slice(0, 16) !== build)
      .map((other) => ({
        path: Path.join(dir, other),
        build: other.slice(0, 16),
        time: Fs.lstatSync(Path.join(dir, other)).mtimeMs
      }))
    for (const f of files) lastUsed.set(f.build, Math.max(lastUsed.get(f.build) ?? 0, f.time))
    const kept = new Set([...lastUsed].sort((a, b) => b[1] - a[1]).slice(0, KEPT_BUILDS).map(([b]) => b))
    for (const old of files) if (!kept.has(old.build)) Fs.rmSync(old.path, { force: true })
  } catch {
    Fs.rmSync(temporary, { force: true })
  }
}

/**
 * What scripts/bundle.js knows of logbook.cjs, written here when it copies this file: its
 * SHA-256, how to decode it (Latin-1 when it is all ASCII: faster, the same text), and the
 * CLI's command names.
 */
const BUILT = { sha256: "(set by scripts/bundle.js)", encoding: "utf8", commands: [] }

/**
 * The V8 flags this process was started with (`NODE_OPTIONS`, node's own arguments, and those
 * bin/logbook.js set before loading this file, which it leaves in the global below) as a short
 * suffix of the cache's name, empty when there are none. V8 rejects a cache made under other
 * flags, so one file shared by `logbook mcp` (heap flags set at start) and `logbook search`
 * (set later) was rejected and rewritten (2 MB) at every switch between them, each start then
 * compiling the whole CLI afresh: `mcp` started 60-80 ms slower after any other command.
 */
const flagsTag = () => {
  const early = globalThis[Symbol.for("logbook/v8-flags-at-start")]
  const flags = [process.env.NODE_OPTIONS ?? "", ...process.execArgv, typeof early === "string" ? early : ""]
    .join(" ").trim()
  if (flags.length === 0) return ""
  let hash = 0x811c9dc5 // FNV-1a: a name, not a defence (the file's owner and mode are checked)
  for (let i = 0; i < flags.length; i++) hash = Math.imul(hash ^ flags.charCodeAt(i), 0x01000193)
  return `-f${(hash >>> 0).toString(16).padStart(8, "0")}`
}

/**
 * The cache of the script, stamped with the flags this process started with. V8 stamps a cache
 * with the flags of the moment it is made, and bin/logbook.js sets heap flags 50 ms into every
 * command that is not a server; so a cache made at the exit of any longer run (the first
 * `search` of a large store) was rejected by the next start and rewritten by it, for ever: each
 * such search compiled the whole CLI (2 000 → 20 000 sessions: about 100 ms of a 250 ms search).
 * Those flags are put back to V8's defaults for the moment the cache is made, then set again.
 */
const cachedDataUnderStartFlags = () => {
  const late = globalThis[Symbol.for("logbook/v8-flags-set-late")]
  const valid = typeof late === "object" && late !== null && typeof late.flags === "string" &&
    typeof late.undo === "string"
  if (valid) setFlagsFromString(late.undo)
  const data = script.createCachedData()
  if (valid) setFlagsFromString(late.flags)
  return data
}

const bundle = fileURLToPath(new URL("./logbook.cjs", import.meta.url))
const source = Fs.readFileSync(bundle, BUILT.encoding)
const dir = cacheDir()
// The few CommonJS files outside the bundle (the lock addon's loader) use Node's cache.
if (dir !== undefined) NodeModule.enableCompileCache(dir)
// One cache per command: a cache holds the functions compiled by the run that wrote it, so one
// written by `logbook --help` (often the first run after an install) left every `search`
// compiling its own functions at each start (6-7 ms of a 80 ms search on 2 000 sessions). An
// argument taken for the command by mistake (a flag's value spelled like one) only names the file.
const command = process.argv.slice(2).find((arg) => BUILT.commands.includes(arg))
const name = `${BUILT.sha256.slice(0, 16)}-${process.version}-${process.arch}${flagsTag()}` +
  `${command === undefined ? "" : `-${command}`}.v8cache`
const cachedData = dir === undefined ? undefined : readCache(Path.join(dir, name))
// The CommonJS wrapper sits on the first line, so line numbers in stack traces are the file's.
const script = new Vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: bundle,
  cachedData
})
// Written at exit, or a second in when the command runs longer: V8 drops the bytecode of
// functions a long run stopped calling (start-up, parsing, layers), and a cache taken after 150
// calls to `logbook mcp` was 1.6 MB instead of 2.2, its next starts 205 ms to a first search
// instead of 120. The timer never keeps the process alive.
if (dir !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
  let written = false
  const write = () => {
    if (written) return
    written = true
    writeCache(dir, name, cachedDataUnderStartFlags())
  }
  process.once("exit", write)
  setTimeout(write, CACHE_AFTER_MS).unref()
}
const module = { exports: {} }
script.runInThisContext()(module.exports, NodeModule.createRequire(bundle), module, bundle, Path.dirname(bundle))
module.exports.main()
