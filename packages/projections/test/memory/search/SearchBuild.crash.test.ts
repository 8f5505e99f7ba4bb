/**
 * The SIGKILL crash loop over search-index builds (docs/search.md#updating-and-merging): between kills the
 * store changes (views rewritten, sessions removed and added), a child brings the on-disk index up
 * to date with tiny segments and is killed at a seeded random instant of its build (calibrated
 * from an unkilled build); after every kill a new process's search must answer exactly what an
 * in-memory index of the store answers. A short seeded loop runs by default;
 * `LOGBOOK_SEARCH_CRASH_ITERATIONS` runs more.
 */
import { assert, describe, it } from "@effect/vitest"
import { nodeLayer, plantView, sessionsRoot } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { searchMemory } from "../../../src/memory/search/MemorySearch.ts"
import { SearchIndexCache } from "../../../src/memory/search/SearchIndexCache.ts"

const CHILD = fileURLToPath(new URL("../../fixtures/searchBuildChild.ts", import.meta.url))
const ITERATIONS = Number(process.env["LOGBOOK_SEARCH_CRASH_ITERATIONS"] ?? "6")
const NOW = 1_800_000_000
const WORDS = ["deploy", "cache", "login", "test", "failed", "npm", "build", "retry", "socket", "schema"]
const QUERIES = ["deploy cache", "login failed", "npm build retry", "socket", "schema test deploy"]

/** A seeded generator (mulberry32): the same plans on every run. */
const seeded = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Runs the child; resolves with its build time, or `undefined` when it was killed. */
const runChild = (root: string, killAfterMs?: number) =>
  Effect.callback<number | undefined, Error>((resume) => {
    const args = ["--conditions=@logbook/source", CHILD, root]
    if (killAfterMs !== undefined) args.push(String(killAfterMs))
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c))
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c))
    child.on("exit", (code, signal) => {
      const done = /done ([0-9.]+)/.exec(out)
      if (signal === "SIGKILL") resume(Effect.succeed(undefined))
      else if (code === 0 && done !== null) resume(Effect.succeed(Number(done[1])))
      else resume(Effect.fail(new Error(`child exited with ${code ?? signal}: ${out} ${err}`)))
    })
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

const fresh = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, Layer.fresh(SearchIndexCache.layer))

describe("search index builds killed at random instants", () => {
  it.live(
    `the next search answers exactly as an in-memory index (${ITERATIONS} kills)`,
    () =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("projections")
        const random = seeded(2826)
        const word = () => WORDS[Math.floor(random() * WORDS.length)] ?? "deploy"
        const plant = (name: string, mtime: number) =>
          plantView(root, name, [`${word()} ${word()} ${word()}`, `${word()} ${word()}`], NOW - 86_400, mtime)
        for (let i = 0; i < 60; i++) plant(`s${i}`, 1_000)
        const calibrated = yield* runChild(root)
        if (calibrated === undefined) return assert.fail("the calibration build was killed")
        let next = 60
        for (let round = 0; round < ITERATIONS; round++) {
          // Change the store: rewrite some views, remove some sessions, add new ones.
          for (let i = 0; i < 20; i++) plant(`s${Math.floor(random() * next)}`, 2_000 + round)
          for (let i = 0; i < 3; i++) {
            fs.rmSync(path.join(root, `s${Math.floor(random() * next)}`), { recursive: true, force: true })
          }
          for (let i = 0; i < 10; i++) {
            plant(`s${next++}`, 2_000 + round)
          }
          // Every other round starts from no index at all, so kills land in a full build too.
          if (round % 2 === 1) fs.rmSync(path.join(root, ".logbook-search-facts.idx"), { force: true })
          yield* runChild(root, Math.floor(random() * (calibrated + 20)))
          for (const query of QUERIES) {
            const options = { now: NOW, maxResults: 12 }
            const want = yield* fresh(searchMemory(root, query, { ...options, snapshot: false }))
            const got = yield* fresh(searchMemory(root, query, options))
            assert.deepStrictEqual(got, want, `round ${round}: ${query}`)
          }
        }
      }).pipe(Effect.provide(nodeLayer())),
    { timeout: 300_000 }
  )
})
