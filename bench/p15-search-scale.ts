/**
 * P15 — search at power-user scale (issue 28; goals in docs/search.md#performance). A generator
 * writes a store of sessions × 40 turns of agent-like text (`--quick`: 1 000 sessions; full:
 * 20 000, about a gigabyte; `LOGBOOK_P15_SESSIONS` overrides), each with a manifest, and every
 * figure comes from a new `logbook` process, as a person's command:
 * - the first `logbook search --in history` (the full build): wall time, MB/s of log, peak RSS;
 * - 50 queries (2–3 words, common and rare), cold processes: p50 and p99 wall and peak RSS, and
 *   the search itself (wall minus `logbook sessions --limit 1` on an empty store);
 * - the same queries with `rg -l` over the same files (GNU `grep -rl` too), alternating;
 * - the index size against the logs; the incremental update after one session changed;
 * - `logbook sessions --limit 20` on the store.
 * Peak RSS comes from `/usr/bin/time` when it exists.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import { makeTurn, plainLine } from "./lib/events.ts"
import type { Outcome } from "./lib/measure.ts"
import { median, ms, note } from "./lib/measure.ts"
import { makeRng } from "./lib/rng.ts"

const BIN = Path.join(import.meta.dirname, "..", "packages", "runtime", "bin", "logbook.js")
const TIME = "/usr/bin/time"
const TURNS = 40
const QUERIES = 50

interface Run {
  readonly ms: number
  readonly rssKb: number | undefined
  readonly stdout: string
}

const run = (argv: ReadonlyArray<string>, rssFile: string, okCodes: ReadonlyArray<number> = [0]): Run => {
  const withTime = Fs.existsSync(TIME)
  const [command, ...args] = withTime ? [TIME, "-o", rssFile, "-f", "%M", ...argv] : argv
  if (command === undefined) throw new Error("empty command")
  const t0 = performance.now()
  const child = spawnSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 28 })
  const elapsed = performance.now() - t0
  if (!okCodes.includes(child.status ?? -1)) {
    throw new Error(`P15: ${argv.join(" ")} exited ${child.status}: ${child.stderr.slice(-2000)}`)
  }
  const rss = withTime ? Number((Fs.readFileSync(rssFile, "utf8").trim().split("\n").at(-1) ?? "").trim()) : NaN
  return { ms: elapsed, rssKb: Number.isFinite(rss) ? rss : undefined, stdout: child.stdout }
}

const hasCommand = (name: string): boolean => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0

const mib = (kb: number | undefined): string => kb === undefined ? "n/a" : `${(kb / 1024).toFixed(0)} MiB`
const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN
}

// A Zipf-like vocabulary of pseudo-words: a few very common, most rare (as identifiers are).
const vocabulary = (size: number): Array<string> => {
  const rng = makeRng(1515)
  const syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "qu", "ze", "bo", "da", "fi", "gu", "ha", "jo"]
  const words = new Set<string>()
  while (words.size < size) {
    let w = ""
    for (let i = rng.int(2, 4); i > 0; i--) w += rng.pick(syllables)
    words.add(w)
  }
  return [...words]
}

/** Writes `sessions` sessions × 40 turns below `root`; returns the bytes of `events.jsonl` written. */
export const writeAgentStore = (root: string, sessions: number, seed = 15): number => {
  const words = vocabulary(20_000)
  const rng = makeRng(seed)
  const zipf = () => words[Math.floor(Math.pow(rng.next(), 3) * words.length)] ?? "ka"
  let bytes = 0
  for (let s = 0; s < sessions; s++) {
    const name = `s${String(s).padStart(6, "0")}`
    const dir = Path.join(root, name)
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const lines: Array<string> = []
    let events = 0
    for (let t = 1; t <= TURNS; t++) {
      const turn = makeTurn(rng, s * TURNS + t, 2)
      let text = ""
      for (let i = rng.int(15, 45); i > 0; i--) text += `${zipf()} `
      // The agent's answer, before the turn's end event.
      turn.splice(turn.length - 1, 0, {
        type: "item.completed",
        item: { id: `m${t}`, type: "agent_message", text: text.trim() }
      })
      for (const event of turn) lines.push(plainLine(event))
      events += turn.length
    }
    const body = `${lines.join("\n")}\n`
    bytes += Buffer.byteLength(body)
    Fs.writeFileSync(Path.join(dir, "events.jsonl"), body, { mode: 0o600 })
    Fs.writeFileSync(
      Path.join(dir, "manifest.json"),
      JSON.stringify({
        session_id: name,
        schema_version: 1,
        created_at: "2025-01-01T00:00:00Z",
        updated_at: new Date(Date.UTC(2025, 0, 1) + s * 60_000).toISOString(),
        turn_count: TURNS,
        event_count: events,
        status: "completed"
      }),
      { mode: 0o600 }
    )
  }
  return bytes
}

/** 2–3-word queries: common words (top of the vocabulary) mixed with rare ones. */
export const makeQueries = (): Array<Array<string>> => {
  const words = vocabulary(20_000)
  const rng = makeRng(4242)
  const out: Array<Array<string>> = []
  for (let i = 0; i < QUERIES; i++) {
    const common = () => words[rng.int(0, 200)] ?? "ka"
    const rare = () => words[rng.int(8_000, 19_999)] ?? "ka"
    const n = rng.int(2, 3)
    const q: Array<string> = []
    for (let k = 0; k < n; k++) q.push(i % 3 === 0 ? common() : i % 3 === 1 ? rare() : k === 0 ? common() : rare())
    out.push(q)
  }
  return out
}

const dirBytes = (root: string, pick: (name: string) => boolean): number => {
  let total = 0
  for (const name of Fs.readdirSync(root)) if (pick(name)) total += Fs.statSync(Path.join(root, name)).size
  return total
}

/** Runs P15 and prints its `P15…:` lines. */
export const runP15 = async (ctx: BenchContext): Promise<Outcome> => {
  const sessions = Number(process.env["LOGBOOK_P15_SESSIONS"] ?? (ctx.profile.quick ? 1_000 : 20_000))
  const base = Path.join(ctx.root, "p15")
  const root = Path.join(base, "sessions")
  const empty = Path.join(base, "empty")
  Fs.mkdirSync(empty, { recursive: true, mode: 0o700 })
  const rssFile = Path.join(base, "rss.txt")
  const g0 = performance.now()
  const logBytes = writeAgentStore(root, sessions)
  note(
    `  wrote ${sessions} sessions × ${TURNS} turns, ${(logBytes / 1e6).toFixed(0)} MB of events.jsonl in ${
      ((performance.now() - g0) / 1000).toFixed(1)
    } s`
  )
  const node = process.execPath
  const logbook = (...args: ReadonlyArray<string>) => [node, BIN, "--sessions-dir", root, ...args]
  const queries = makeQueries()

  // The full build: the first search of the store.
  const build = run(logbook("search", "--in", "history", (queries[0] ?? []).join(" ")), rssFile)
  const indexBytes = dirBytes(root, (n) => n.startsWith(".logbook-search-history"))
  const buildMbps = logBytes / 1e6 / (build.ms / 1000)

  // The process floor: the same build's `sessions --limit 1` on an empty store.
  const floorRuns: Array<number> = []
  for (let i = 0; i < 7; i++) {
    floorRuns.push(run([node, BIN, "--sessions-dir", empty, "sessions", "--limit", "1"], rssFile).ms)
  }
  const floor = median(floorRuns)

  const rg = hasCommand("rg")
  const grepRl = hasCommand("grep")
  const searchMs: Array<number> = []
  const searchRss: Array<number> = []
  const rgMs: Array<number> = []
  const grepMs: Array<number> = []
  queries.forEach((q, i) => {
    const ours = () => {
      const r = run(logbook("search", "--in", "history", q.join(" ")), rssFile)
      searchMs.push(r.ms)
      if (r.rssKb !== undefined) searchRss.push(r.rssKb)
    }
    const theirs = () => {
      const patterns = q.flatMap((w) => ["-e", w])
      // Exit 1 is "no match", not a failure.
      if (rg) rgMs.push(run(["rg", "-l", "-F", "-i", ...patterns, root], rssFile, [0, 1]).ms)
      if (grepRl) grepMs.push(run(["grep", "-rlFi", ...patterns, root, "--include=events.jsonl"], rssFile, [0, 1]).ms)
    }
    if (i % 2 === 0) {
      ours()
      theirs()
    } else {
      theirs()
      ours()
    }
  })
  const p50 = quantile(searchMs, 0.5)
  const p99 = quantile(searchMs, 0.99)
  const peakSearch = searchRss.length === 0 ? undefined : Math.max(...searchRss)

  // One session changes (a turn appended); the next search updates the index.
  const changed = Path.join(root, "s000007", "events.jsonl")
  const extra = makeTurn(makeRng(77), 99_999, 4).map((e) => plainLine(e)).join("\n")
  Fs.appendFileSync(changed, `${extra}\n`)
  const update = run(logbook("search", "--in", "history", (queries[1] ?? []).join(" ")), rssFile)
  const after = run(logbook("search", "--in", "history", (queries[1] ?? []).join(" ")), rssFile)
  const updateMs = update.ms - after.ms

  // `sessions --limit 20`: the first run writes the catalog, later ones read it.
  run(logbook("sessions", "--limit", "20"), rssFile)
  const listRuns: Array<number> = []
  for (let i = 0; i < 5; i++) listRuns.push(run(logbook("sessions", "--limit", "20"), rssFile).ms)
  const list = median(listRuns)

  const rgP50 = rg ? quantile(rgMs, 0.5) : NaN
  const grepP50 = grepRl ? quantile(grepMs, 0.5) : NaN
  console.log(
    `P15 search at scale: ${sessions} sessions × ${TURNS} turns, ${
      (logBytes / 1e6).toFixed(0)
    } MB of logs, ${QUERIES} cold queries`
  )
  console.log(
    `P15 build: ${ms(build.ms)}, ${buildMbps.toFixed(1)} MB/s (goal ≥ 50), peak ${mib(build.rssKb)} (goal < 300 MiB)`
  )
  console.log(
    `P15 search p50: ${ms(p50)} (goal ≤ 300 ms), p99 ${ms(p99)}; search only ${
      ms(p50 - floor)
    } (goal ≤ 100 ms; process floor ${ms(floor)})`
  )
  console.log(
    rg
      ? `P15 vs rg -l: rg p50 ${ms(rgP50)}, ratio ${(p50 / rgP50).toFixed(2)} (goal ≤ 0.25)`
      : `P15 vs rg -l: rg not installed here, ratio skipped`
  )
  if (grepRl) console.log(`P15 vs grep -rl: grep p50 ${ms(grepP50)}, ratio ${(p50 / grepP50).toFixed(2)}`)
  console.log(`P15 search RSS: peak ${mib(peakSearch)} (goal < 100 MiB)`)
  console.log(
    `P15 index size: ${(indexBytes / 1e6).toFixed(1)} MB, ${
      ((indexBytes / logBytes) * 100).toFixed(1)
    }% of the logs (goal ≤ 35%)`
  )
  console.log(`P15 incremental update: ${ms(updateMs)} after one changed session (goal ≤ 200 ms)`)
  console.log(`P15 sessions --limit 20: ${ms(list)} (goal ≤ 150 ms)`)
  const met = p50 <= 300 && p50 - floor <= 100 && buildMbps >= 50 && updateMs <= 200 && list <= 150 &&
    (peakSearch === undefined || peakSearch / 1024 < 100)
  return {
    id: "P15",
    value: p50,
    text: `p50 ${ms(p50)}, search only ${ms(p50 - floor)}, build ${buildMbps.toFixed(1)} MB/s, RSS ${mib(peakSearch)}`,
    goal: "p50 ≤ 300 ms, search ≤ 100 ms, ≥ 50 MB/s, < 100 MiB",
    met
  }
}
