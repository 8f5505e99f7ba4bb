/**
 * The engine comparison behind docs/search.md#engine-choice (issue 28): the P15 store indexed by
 * SQLite FTS5 (Node 24's built-in `node:sqlite`, so no native dependency) against Logbook's own
 * segments, on the same generated sessions, the same turn texts (`historyText`, as the history
 * index reads them) and the same 50 queries.
 *
 * `node --conditions=@logbook/source bench/compare-fts5.ts [SESSIONS]` (default 1 000; P15's
 * full store is 20 000). `npm run build` first: Logbook's side runs the bundled CLI. Printed:
 * build time, MB/s and peak RSS of each engine, index size, cold query p50 / p99 wall and peak
 * RSS (a new process per query for both), and how many of FTS5's top 10 turns are Logbook's top
 * 10 (FTS5's `bm25()` has its own idf and no recency multiplier, so the rankings differ).
 * Not part of `npm run bench`: it is run when the engine question is asked again.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { DatabaseSync } from "node:sqlite"

const BIN = Path.join(import.meta.dirname, "..", "packages", "runtime", "bin", "logbook.js")
const TIME = "/usr/bin/time"
const TOP = 10

/** Child mode: builds the FTS5 database `db` from every session of `root`. */
const build = async (root: string, db: string): Promise<void> => {
  // Loaded here only: a query child stays a bare `node:sqlite` process.
  const { historyText } = await import("@logbook/projections")
  const sqlite = new DatabaseSync(db)
  sqlite.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF")
  sqlite.exec("CREATE VIRTUAL TABLE docs USING fts5(session UNINDEXED, turn UNINDEXED, body)")
  const insert = sqlite.prepare("INSERT INTO docs(session, turn, body) VALUES (?, ?, ?)")
  sqlite.exec("BEGIN")
  for (const name of Fs.readdirSync(root).sort()) {
    const log = Path.join(root, name, "events.jsonl")
    if (!Fs.existsSync(log)) continue
    let turn = 0
    let parts: Array<string> = []
    const flush = () => {
      if (turn > 0 && parts.length > 0) insert.run(name, turn, parts.join("\n"))
      parts = []
    }
    // A session's log is tens of KiB here: read whole, line by line, as the index reads turns.
    for (const line of Fs.readFileSync(log, "utf8").split("\n")) {
      if (line.length === 0) continue
      const event = JSON.parse(line).event
      if (event.type === "turn.started") {
        flush()
        turn++
      }
      for (const part of historyText(event)) if (part.length > 0) parts.push(part)
    }
    flush()
  }
  sqlite.exec("COMMIT")
  sqlite.close()
}

/** Child mode: the top turns for `words` from the FTS5 database `db`, as JSON lines. */
const query = (db: string, words: ReadonlyArray<string>): void => {
  const sqlite = new DatabaseSync(db, { readOnly: true })
  const match = words.map((w) => `"${w.replaceAll("\"", "\"\"")}"`).join(" OR ")
  const rows = sqlite.prepare(
    `SELECT session, turn, bm25(docs) AS score FROM docs WHERE docs MATCH ? ORDER BY score LIMIT ${TOP}`
  ).all(match)
  process.stdout.write(rows.map((r) => JSON.stringify([r["session"], r["turn"]])).join("\n"))
  sqlite.close()
}

interface Timed {
  readonly ms: number
  readonly rssMiB: number | undefined
  readonly stdout: string
}

const timed = (argv: ReadonlyArray<string>, rssFile: string): Timed => {
  const withTime = Fs.existsSync(TIME)
  const [command, ...args] = withTime ? [TIME, "-o", rssFile, "-f", "%M", ...argv] : argv
  if (command === undefined) throw new Error("empty command")
  const t0 = performance.now()
  const child = spawnSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 28 })
  const ms = performance.now() - t0
  if (child.status !== 0) throw new Error(`${argv.join(" ")} exited ${child.status}: ${child.stderr}`)
  const kb = withTime ? Number(Fs.readFileSync(rssFile, "utf8").trim().split("\n").pop()) : Number.NaN
  return { ms, rssMiB: Number.isFinite(kb) ? kb / 1024 : undefined, stdout: child.stdout }
}

const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

const fmt = (n: number | undefined, digits = 0): string => n === undefined ? "n/a" : n.toFixed(digits)

const compare = async (sessions: number): Promise<void> => {
  const { makeQueries, writeAgentStore } = await import("./p15-search-scale.ts")
  const base = Fs.mkdtempSync(Path.join(Os.tmpdir(), "logbook-fts5-"))
  const root = Path.join(base, "sessions")
  const db = Path.join(base, "fts5.db")
  const rssFile = Path.join(base, "rss.txt")
  const self = [process.execPath, "--conditions=@logbook/source", import.meta.filename]
  const logbook = (...args: ReadonlyArray<string>) => [process.execPath, BIN, "--sessions-dir", root, ...args]
  try {
    const logBytes = writeAgentStore(root, sessions)
    const mb = logBytes / 1e6
    console.log(`${sessions} sessions × 40 turns, ${mb.toFixed(0)} MB of events.jsonl`)
    const queries = makeQueries()
    const ftsBuild = timed([...self, "build", root, db], rssFile)
    const oursBuild = timed(logbook("search", "--in", "history", (queries[0] ?? []).join(" ")), rssFile)
    const indexBytes = Fs.readdirSync(root).filter((n) => n.startsWith(".logbook-search-history"))
      .reduce((sum, n) => sum + Fs.statSync(Path.join(root, n)).size, 0)
    const fts: Array<Timed> = []
    const ours: Array<Timed> = []
    let overlap = 0
    let compared = 0
    queries.forEach((q, i) => {
      const one = () => timed([...self, "query", db, ...q], rssFile)
      const two = () =>
        timed(logbook("search", "--in", "history", "--json", "--max", String(TOP), q.join(" ")), rssFile)
      // Alternating which runs first, as P15 does, so neither always meets a warmer page cache.
      let a: Timed
      let b: Timed
      if (i % 2 === 0) {
        a = one()
        b = two()
      } else {
        b = two()
        a = one()
      }
      fts.push(a)
      ours.push(b)
      const theirTop = new Set(a.stdout.split("\n").filter((l) => l.length > 0))
      // A history hit's chunk id is `<session>:<turn>`.
      const hits: Array<{ chunk_id: string }> = JSON.parse(b.stdout)
      for (const hit of hits) {
        const at = hit.chunk_id.lastIndexOf(":")
        compared++
        if (theirTop.has(JSON.stringify([hit.chunk_id.slice(0, at), Number(hit.chunk_id.slice(at + 1))]))) overlap++
      }
    })
    const row = (name: string, build: Timed, size: number, runs: ReadonlyArray<Timed>) =>
      console.log(
        `${name.padEnd(8)} build ${fmt(build.ms / 1000, 1)} s (${fmt(mb / (build.ms / 1000), 1)} MB/s, ` +
          `peak ${fmt(build.rssMiB)} MiB), index ${fmt(size / 1e6, 1)} MB (${fmt((100 * size) / logBytes, 1)}%), ` +
          `cold query p50 ${fmt(quantile(runs.map((r) => r.ms), 0.5))} ms p99 ${
            fmt(quantile(runs.map((r) => r.ms), 0.99))
          } ms, peak ${fmt(Math.max(...runs.map((r) => r.rssMiB ?? 0)))} MiB`
      )
    row("FTS5", ftsBuild, Fs.statSync(db).size, fts)
    row("Logbook", oursBuild, indexBytes, ours)
    console.log(`top-${TOP} agreement: ${overlap} of ${compared} Logbook hits are in FTS5's top ${TOP}`)
  } finally {
    Fs.rmSync(base, { recursive: true, force: true })
  }
}

const [mode, ...rest] = process.argv.slice(2)
if (mode === "build" && rest[0] !== undefined && rest[1] !== undefined) await build(rest[0], rest[1])
else if (mode === "query" && rest[0] !== undefined) query(rest[0], rest.slice(1))
else await compare(Number(mode ?? 1_000))
