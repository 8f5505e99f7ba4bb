/**
 * P6 — cross-session search (README.md#performance, docs/search.md#performance; goal: p50 ≤ 0.5× the plain index).
 * Corpus: 5 000 sessions × 32 facts (1 000 with `--quick`) written as `derived/memory.json`,
 * agent-like text of about 11 tokens per fact — tens of thousands of distinct terms, commands,
 * paths, error messages, and the words "in", "fix", "ran", "failed" in 15–40 % of facts.
 * Measured: the warm in-process index (`refreshSearchIndex` once, then `index.search`) on 2–3
 * term queries mostly drawn from real facts. Baseline: a plain inverted index scoring every
 * posting (`baselines/search.ts`), same process, same queries; both must return the same top 6.
 * Also printed: the cold `logbook search` wall time with the index snapshot in place.
 */
import { refreshSearchIndex } from "@logbook/projections"
import { SessionFs } from "@logbook/store"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BaselineDoc } from "./baselines/search.ts"
import { buildPlainIndex } from "./baselines/search.ts"
import type { BenchContext } from "./lib/context.ts"
import type { Outcome } from "./lib/measure.ts"
import { median, ms, note } from "./lib/measure.ts"
import type { Rng } from "./lib/rng.ts"
import { makeRng } from "./lib/rng.ts"

const FACTS_PER_SESSION = 32
const QUERIES = 300
const K = 6
const NOW = 1_800_000_000
const DAY = 86_400

const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ne",
  "ru",
  "sa",
  "to",
  "vi",
  "zu",
  "ber",
  "con",
  "dex",
  "fil",
  "gram",
  "hub",
  "jet",
  "mod",
  "pix",
  "qua",
  "tor"
]

/** A vocabulary of `n` distinct pseudo-words. */
const vocabulary = (rng: Rng, n: number): Array<string> => {
  const words = new Set<string>()
  while (words.size < n) {
    let w = ""
    const parts = rng.int(2, 4)
    for (let i = 0; i < parts; i++) w += rng.pick(SYLLABLES)
    words.add(w)
  }
  return [...words]
}

/** Zipf-like pick: low indexes much more often. */
const zipf = (rng: Rng, words: ReadonlyArray<string>): string => {
  const i = Math.floor(Math.pow(rng.next(), 2.2) * words.length)
  return words[i] ?? "x"
}

const COMMANDS = [
  "npm test",
  "npm run build",
  "cargo test",
  "pytest -x",
  "git status",
  "tsc -b",
  "eslint .",
  "go test ./..."
]
const ERRORS = ["TypeError", "ENOENT", "AssertionError", "SyntaxError", "ECONNREFUSED", "timeout", "panic", "segfault"]

const makeFact = (rng: Rng, words: ReadonlyArray<string>): string => {
  const w = () => zipf(rng, words)
  const path = () => `src/${w()}/${w()}.ts`
  const parts: Array<string> = []
  switch (rng.int(0, 5)) {
    case 0:
      parts.push(`ran ${rng.pick(COMMANDS)}:`, `${rng.int(1, 40)}`, w(), "tests", "failed")
      break
    case 1:
      parts.push("fix", w(), w(), "in", path())
      break
    case 2:
      parts.push(`${rng.pick(ERRORS)}:`, w(), w(), "at", `${path()}:${rng.int(1, 900)}`)
      break
    case 3:
      parts.push("file update:", path())
      break
    default:
      parts.push(w(), w(), w(), w(), w())
  }
  if (rng.next() < 0.3) parts.push("in", w())
  if (rng.next() < 0.12) parts.push("fix")
  if (rng.next() < 0.1) parts.push("ran", w())
  if (rng.next() < 0.08) parts.push("failed")
  while (parts.join(" ").split(/[^\p{L}\p{N}]+/u).length < 9) parts.push(w())
  return parts.join(" ")
}

/** Writes the corpus; returns its documents in the search's chunk-id form. */
export const writeCorpus = (root: string, sessions: number): Array<BaselineDoc> => {
  const rng = makeRng(0x5ea7c4)
  const words = vocabulary(rng, 40_000)
  const docs: Array<BaselineDoc> = []
  Fs.mkdirSync(root, { recursive: true, mode: 0o700 })
  for (let s = 0; s < sessions; s++) {
    const name = `s${String(s).padStart(5, "0")}`
    const createdAt = NOW - rng.int(0, 400) * DAY
    const facts = Array.from({ length: FACTS_PER_SESSION }, () => makeFact(rng, words))
    const dir = Path.join(root, name, "derived")
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    Fs.writeFileSync(
      Path.join(dir, "memory.json"),
      JSON.stringify({
        session_id: name,
        schema_version: 3,
        summary: "bench",
        task_summary: null,
        spec_summary: null,
        evaluation_summary: null,
        touched_files: [],
        grounded_facts: facts.map((fact) => ({ fact, source: "bench" })),
        history_artifact_path: null,
        generated_at: "2026-01-01T00:00:00Z",
        created_at: createdAt,
        updated_at: createdAt
      }),
      { mode: 0o600 }
    )
    facts.forEach((text, i) => docs.push({ chunkId: `${name}:${i}`, text, createdAt }))
  }
  return docs
}

const makeQueries = (docs: ReadonlyArray<BaselineDoc>): Array<string> => {
  const rng = makeRng(0x9e3779)
  const common = ["in", "fix", "ran", "failed", "tests"]
  return Array.from({ length: QUERIES }, () => {
    const doc = docs[rng.int(0, docs.length - 1)]
    const tokens = (doc?.text ?? "").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t.length > 0)
    const n = rng.int(2, 3)
    const picked: Array<string> = []
    for (let i = 0; i < n; i++) picked.push(rng.next() < 0.25 ? rng.pick(common) : rng.pick(tokens))
    return picked.join(" ")
  })
}

// The built CLI when present (as users run it), else the sources.
const runtimeDir = Path.join(import.meta.dirname, "..", "packages", "runtime")
const builtBin = Path.join(runtimeDir, "bin", "logbook.js")
const cliArgs = Fs.existsSync(Path.join(runtimeDir, "dist", "bin.js"))
  ? [builtBin]
  : ["--conditions=@logbook/source", Path.join(runtimeDir, "src", "bin.ts")]

const timedCli = (root: string, query: string): number => {
  const t0 = performance.now()
  const r = spawnSync(process.execPath, [
    ...cliArgs,
    "--sessions-dir",
    root,
    "search",
    query,
    "--json",
    "--now",
    String(NOW)
  ], { encoding: "utf8" })
  const elapsed = performance.now() - t0
  if (r.status !== 0) throw new Error(`logbook search failed: ${r.stderr}`)
  return elapsed
}

/** Runs P6 and prints its medians. */
export const runP6 = async (ctx: BenchContext): Promise<Outcome> => {
  const sessions = ctx.profile.quick ? 1_000 : 5_000
  const root = Path.join(ctx.root, "p6", "sessions")
  const t0 = performance.now()
  const docs = writeCorpus(root, sessions)
  note(`  wrote ${sessions} sessions × ${FACTS_PER_SESSION} facts in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  const queries = makeQueries(docs)

  const b0 = performance.now()
  const plain = buildPlainIndex(docs)
  const baselineBuild = performance.now() - b0
  const l0 = performance.now()
  const { index: loaded } = await Effect.runPromise(
    refreshSearchIndex(root, "facts", { snapshot: false }).pipe(Effect.provide(SessionFs.layerNode))
  )
  // `snapshot: false` builds the in-memory index, whose synchronous `search` the loop measures.
  if (!("scoreAll" in loaded)) throw new Error("P6: refreshSearchIndex without a snapshot gave the on-disk index")
  const index = loaded
  const logbookBuild = performance.now() - l0

  // Same results first: every query's top 6, ids and scores.
  for (const q of queries) {
    const a = index.search(q, { maxResults: K, minScore: 0, now: NOW }).map((h) => `${h.chunkId}=${h.score}`)
    const b = plain.search(q, K, NOW).map((h) => `${h.chunkId}=${h.score}`)
    if (a.join(",") !== b.join(",")) {
      throw new Error(`P6 results differ for "${q}":\n  logbook ${a.join(",")}\n  baseline ${b.join(",")}`)
    }
  }

  const lTimes: Array<number> = []
  const bTimes: Array<number> = []
  for (let round = 0; round < 3; round++) {
    for (const q of queries) {
      const first = round % 2 === 0
      const measure = (f: () => unknown, into: Array<number>) => {
        const s = performance.now()
        f()
        into.push(performance.now() - s)
      }
      const l = () => index.search(q, { maxResults: K, minScore: 0, now: NOW })
      const b = () => plain.search(q, K, NOW)
      if (first) {
        measure(l, lTimes)
        measure(b, bTimes)
      } else {
        measure(b, bTimes)
        measure(l, lTimes)
      }
    }
  }
  const lp50 = median(lTimes)
  const bp50 = median(bTimes)
  const ratio = lp50 / bp50

  // Cold CLI: the first run builds and saves the snapshot, later ones load it.
  const firstCli = timedCli(root, queries[0] ?? "fix")
  const cold = median([
    timedCli(root, queries[1] ?? "fix"),
    timedCli(root, queries[2] ?? "fix"),
    timedCli(root, queries[3] ?? "fix")
  ])
  const snapshotBytes = Fs.statSync(Path.join(root, ".logbook-search-facts.idx")).size

  console.log(
    `P6 search: ${sessions} sessions × ${FACTS_PER_SESSION} facts (${docs.length} documents), ${queries.length} queries × 3 rounds, top ${K}`
  )
  console.log(`  logbook  p50 ${(lp50 * 1000).toFixed(0)} µs  (index built in ${ms(logbookBuild)} from the files)`)
  console.log(`  baseline p50 ${(bp50 * 1000).toFixed(0)} µs  (built in ${ms(baselineBuild)} from memory)`)
  console.log(`  identical top ${K} for all ${queries.length} queries`)
  console.log(
    `  cold CLI search: ${ms(cold)} with the snapshot (${(snapshotBytes / 1e6).toFixed(1)} MB); ${
      ms(firstCli)
    } building it`
  )
  console.log(`  ratio ${ratio.toFixed(2)}; goal ≤ 0.5`)
  return { id: "P6", value: ratio, text: ratio.toFixed(2), goal: "≤ 0.5", met: ratio <= 0.5 }
}
