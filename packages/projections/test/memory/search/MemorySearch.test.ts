/**
 * Ranked search over memory views and histories (docs/search.md): the BM25 formula and constants,
 * ties, empty queries, minScore, chunk ids of entries without text, the recency multiplier, the
 * incremental index and its snapshot under external edits, deletions and new sessions, symlinked
 * sessions, history search naming turns, and a property: the incremental, pruned index returns
 * exactly what a from-scratch full scoring returns.
 */
import { assert, describe, it } from "@effect/vitest"
import { bm25Idf, tokenize } from "@logbook/domain"
import { SessionFs } from "@logbook/store"
import { appendAll, ev, nodeLayer, openLog, plantView, sessionsRoot } from "@logbook/testkit"
import { Effect, Layer, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SearchIndex, sessionDocs } from "../../../src/memory/search/internal/searchIndex.ts"
import { refreshSearchIndex, searchMemory, searchSnapshotName } from "../../../src/memory/search/MemorySearch.ts"
import { SearchIndexCache } from "../../../src/memory/search/SearchIndexCache.ts"
import { recentSessions } from "../../../src/session/RecentSessions.ts"

const testRoot = sessionsRoot("projections")

const DAY = 86_400
const NOW = 1_800_000_000

/** Runs an effect with an index cache of its own, as a new process would. */
const fresh = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, Layer.fresh(SearchIndexCache.layer))

describe("searchMemory (facts)", () => {
  it.effect("scores with the BM25 formula, k1 1.2, b 0.75, and the reference idf", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      plantView(root, "a", ["fix the login test", "update the readme"])
      plantView(root, "b", ["login works"])
      const results = yield* fresh(searchMemory(root, "login", { now: NOW }))
      // N = 3, df(login) = 2, avgdl = (4 + 3 + 2) / 3 = 3
      const idf = Math.log((3 - 2 + 0.5) / (2 + 0.5) + 1)
      const score = (dl: number) => (idf * 2.2) / (1 + 1.2 * (1 - 0.75 + (0.75 * dl) / 3))
      assert.deepStrictEqual(results.map((r) => r.chunk_id), ["b:0", "a:0"])
      assert.closeTo(results[0]?.score ?? 0, score(2), 1e-12)
      assert.closeTo(results[1]?.score ?? 0, score(4), 1e-12)
      assert.strictEqual(results[1]?.snippet, "fix the login test")
      assert.strictEqual(results[1]?.path, path.join(root, "a", "derived", "memory.json"))
      assert.strictEqual(results[1]?.created_at, null)
      assert.strictEqual(results[1]?.source, "session")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("ranks a fact covering every query term above partial matches", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      plantView(root, "s", ["npm test failed in ci", "npm install", "the ci pipeline is green", "failed to connect"])
      const results = yield* fresh(searchMemory(root, "npm failed ci", { now: NOW }))
      assert.strictEqual(results[0]?.chunk_id, "s:0")
      assert.strictEqual(results.length, 4)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("breaks ties by chunk id whatever order the directories were created in", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      for (const name of ["zeta", "alpha", "mid"]) plantView(root, name, ["same fact here"])
      plantView(root, "alpha", ["same fact here", null, "same fact here"])
      const results = yield* fresh(searchMemory(root, "fact", { now: NOW }))
      assert.deepStrictEqual(results.map((r) => r.chunk_id), ["alpha:0", "alpha:2", "mid:0", "zeta:0"])
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("returns nothing for empty, punctuation-only and unknown queries, and honours minScore and maxResults", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      plantView(root, "s", ["alpha beta", "beta gamma", "gamma delta"])
      assert.deepStrictEqual(yield* fresh(searchMemory(root, "", { now: NOW })), [])
      assert.deepStrictEqual(yield* searchMemory(root, " ,.;-- ", { now: NOW }), [])
      assert.deepStrictEqual(yield* searchMemory(root, "omega", { now: NOW }), [])
      const all = yield* searchMemory(root, "beta gamma", { now: NOW })
      assert.strictEqual(all.length, 3)
      const top = all[0]?.score ?? 0
      const kept = yield* searchMemory(root, "beta gamma", { now: NOW, minScore: top })
      assert.deepStrictEqual(kept.map((r) => r.chunk_id), [all[0]?.chunk_id])
      assert.strictEqual((yield* searchMemory(root, "beta gamma", { now: NOW, maxResults: 1 })).length, 1)
      assert.deepStrictEqual(yield* searchMemory(path.join(root, "missing"), "beta", { now: NOW }), [])
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("lets an entry without text consume its index", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      plantView(root, "s", [null, "the only fact"])
      const results = yield* fresh(searchMemory(root, "fact", { now: NOW }))
      assert.deepStrictEqual(results.map((r) => r.chunk_id), ["s:1"])
      assert.strictEqual(results[0]?.snippet, "the only fact")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("applies the recency multiplier: reorders a near-tie, never a clearly better match", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      plantView(root, "aold", ["deploy script"], NOW - 365 * DAY)
      plantView(root, "bnew", ["deploy script"], NOW)
      plantView(root, "cbest", ["deploy deploy deploy"], NOW - 365 * DAY)
      plantView(root, "dfiller", ["unrelated words only", "more filler text here"])
      const results = yield* fresh(searchMemory(root, "deploy", { now: NOW }))
      assert.deepStrictEqual(results.map((r) => r.chunk_id), ["cbest:0", "bnew:0", "aold:0"])
      const [best, recent, old] = results
      assert.closeTo((recent?.score ?? 0) / (old?.score ?? 1), 1.1 / (1 + 0.1 * Math.pow(2, -365 / 30)), 1e-9)
      assert.isAbove(best?.score ?? 0, recent?.score ?? 0)
      assert.strictEqual(recent?.created_at, NOW)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("sees external edits, deletions and new sessions, and saves a snapshot a new process loads", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      plantView(root, "a", ["red apple"], undefined, 1_000)
      plantView(root, "b", ["green apple"], undefined, 1_000)
      const first = yield* refreshSearchIndex(root, "facts")
      assert.strictEqual(first.stats.rebuilt, 2)
      assert.isTrue(fs.existsSync(path.join(root, searchSnapshotName("facts"))))
      // The snapshot is never taken for a session by listings.
      const listing = yield* recentSessions(root)
      assert.deepStrictEqual([...listing.unreadable].sort(), ["a", "b"])
      const again = yield* refreshSearchIndex(root, "facts")
      assert.strictEqual(again.stats.rebuilt, 0)
      // A new process: the snapshot is loaded, nothing is re-read.
      const loaded = yield* fresh(refreshSearchIndex(root, "facts"))
      assert.isTrue(loaded.stats.fromSnapshot)
      assert.strictEqual(loaded.stats.rebuilt, 0)
      assert.deepStrictEqual((yield* searchMemory(root, "apple", { now: NOW })).map((r) => r.chunk_id), ["a:0", "b:0"])
      // An external edit, a deletion and a new session, then a new process.
      plantView(root, "a", ["red pear"], undefined, 2_000)
      fs.rmSync(path.join(root, "b"), { recursive: true })
      plantView(root, "c", ["apple pie"], undefined, 2_000)
      const after = yield* fresh(searchMemory(root, "apple", { now: NOW }))
      assert.deepStrictEqual(after.map((r) => r.chunk_id), ["c:0"])
      assert.deepStrictEqual((yield* searchMemory(root, "pear", { now: NOW })).map((r) => r.chunk_id), ["a:0"])
      // A corrupt snapshot is rebuilt.
      fs.writeFileSync(path.join(root, searchSnapshotName("facts")), "garbage")
      const rebuilt = yield* fresh(refreshSearchIndex(root, "facts"))
      assert.isFalse(rebuilt.stats.fromSnapshot)
      assert.strictEqual(rebuilt.stats.rebuilt, 2)
      assert.deepStrictEqual((yield* searchMemory(root, "apple", { now: NOW })).map((r) => r.chunk_id), ["c:0"])
    }).pipe(Effect.provide(Layer.fresh(SearchIndexCache.layer)), Effect.provide(nodeLayer())))

  it.effect("never reads a symlinked session entry or memory view, and skips corrupt views", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* testRoot
      plantView(root, "real", ["secret word"])
      plantView(outside, "target", ["secret word"])
      fs.symlinkSync(path.join(outside, "target"), path.join(root, "linked"))
      fs.mkdirSync(path.join(root, "viewlink", "derived"), { recursive: true })
      fs.symlinkSync(
        path.join(outside, "target", "derived", "memory.json"),
        path.join(root, "viewlink", "derived", "memory.json")
      )
      plantView(root, "corrupt", [])
      fs.writeFileSync(path.join(root, "corrupt", "derived", "memory.json"), "{nope")
      const results = yield* fresh(searchMemory(root, "secret", { now: NOW }))
      assert.deepStrictEqual(results.map((r) => r.chunk_id), ["real:0"])
    }).pipe(Effect.provide(nodeLayer())))
})

describe("searchMemory (history)", () => {
  it.effect("ranks retained turns and names the session, turn and byte offset", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const log = yield* openLog(root, "h")
      yield* appendAll(log, [ev.turnStarted(), ev.msg("looked at the parser"), ev.completed()])
      yield* appendAll(log, [ev.turnStarted(), ev.msg("the flaky websocket test is fixed"), ev.completed()])
      yield* log.flush
      const results = yield* fresh(searchMemory(root, "websocket", { scope: "history", now: NOW }))
      assert.strictEqual(results.length, 1)
      const hit = results[0]
      assert.strictEqual(hit?.chunk_id, "h:2")
      assert.strictEqual(hit?.turn, 2)
      assert.strictEqual(hit?.session, "h")
      const bytes = fs.readFileSync(path.join(root, "h", "events.jsonl"))
      assert.match(
        bytes.subarray(hit?.offset ?? 0).toString("utf8"),
        /^\{"schema_version":"[^"]+","event":\{"type":"turn\.started"/
      )
      assert.match(hit?.snippet ?? "", /websocket/)
      // An append changes the log's signature: the new turn is found.
      yield* appendAll(log, [ev.turnStarted(), ev.msg("websocket again"), ev.completed()])
      yield* log.flush
      const more = yield* searchMemory(root, "websocket", { scope: "history", now: NOW })
      assert.deepStrictEqual(more.map((r) => r.turn).sort(), [2, 3])
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("refresh: false queries the held index as it is until the host refreshes it", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const log = yield* openLog(root, "held")
      yield* appendAll(log, [ev.turnStarted(), ev.msg("the websocket test"), ev.completed()])
      yield* log.flush
      // No index yet: the first search builds it even without refresh.
      const first = yield* searchMemory(root, "websocket", { scope: "history", now: NOW, refresh: false })
      assert.deepStrictEqual(first.map((r) => r.turn), [1])
      yield* appendAll(log, [ev.turnStarted(), ev.msg("websocket again"), ev.completed()])
      yield* log.flush
      const held = yield* searchMemory(root, "websocket", { scope: "history", now: NOW, refresh: false })
      assert.deepStrictEqual(held.map((r) => r.turn), [1])
      yield* refreshSearchIndex(root, "history")
      const after = yield* searchMemory(root, "websocket", { scope: "history", now: NOW, refresh: false })
      assert.deepStrictEqual(after.map((r) => r.turn).sort(), [1, 2])
    }).pipe(Effect.provide(Layer.merge(nodeLayer(), Layer.fresh(SearchIndexCache.layer)))))

  it.effect("indexes, stores and shows redacted text: documents, snippets and the snapshot hold no secret", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const log = yield* openLog(root, "secret")
      yield* appendAll(log, [
        ev.turnStarted(),
        ev.msg("deploy with PGPASSWORD=pgpw0001 and hf_abcdefghijklmnopqrstuvwxyz0123AB"),
        ev.completed()
      ])
      yield* log.flush
      plantView(root, "secret", ["deploy key STRIPE_KEY=stripekey0002"])
      for (const scope of ["facts", "history"] as const) {
        const results = yield* fresh(searchMemory(root, "deploy", { scope, now: NOW }))
        assert.strictEqual(results.length, 1)
        const shown = JSON.stringify(results)
        for (const secret of ["pgpw0001", "abcdefghijklmnopqrstuvwxyz0123AB", "stripekey0002"]) {
          assert.notInclude(shown, secret)
          const snapshot = fs.readFileSync(path.join(root, searchSnapshotName(scope)), "latin1")
          assert.notInclude(snapshot, secret)
        }
        assert.include(shown, "[REDACTED]")
        // The secret's own words are not in the index either.
        assert.deepStrictEqual(yield* searchMemory(root, "pgpw0001 stripekey0002", { scope, now: NOW }), [])
      }
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("places a long turn's snippet around the first matched word, from the snapshot too", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const log = yield* openLog(root, "long")
      const filler = "lorem ipsum dolor sit amet ".repeat(30)
      yield* appendAll(log, [
        ev.turnStarted(),
        ev.msg(filler),
        ev.msg(`the flaky websocket test is fixed ${filler}`),
        ev.completed()
      ])
      yield* appendAll(log, [ev.turnStarted(), ev.msg("websocket in the next turn"), ev.completed()])
      yield* log.flush
      const check = (results: ReadonlyArray<{ readonly turn?: number; readonly snippet: string }>) => {
        const hit = results.find((r) => r.turn === 1)
        assert.isDefined(hit)
        assert.isAtMost(hit?.snippet.length ?? 0, 240)
        assert.include(hit?.snippet ?? "", "flaky websocket test")
        assert.isTrue(hit?.snippet.startsWith("…"))
        assert.notInclude(hit?.snippet ?? "", "next turn")
      }
      check(yield* fresh(searchMemory(root, "websocket", { scope: "history", now: NOW })))
      check(yield* fresh(searchMemory(root, "websocket", { scope: "history", now: NOW })))
    }).pipe(Effect.provide(nodeLayer())))
})

describe("searchMemory (history, many results)", () => {
  it.effect(
    "placing a thousand snippets reads each hit turn, not the next 256 KiB of the log",
    () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        // Written as a VT Code log would be (a few thousand turns, no manifest needed to search).
        fs.mkdirSync(path.join(root, "many"), { recursive: true })
        const line = (event: unknown) => `{"schema_version":"0.18.0","event":${JSON.stringify(event)}}\n`
        const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }
        let text = ""
        for (let i = 0; i < 3000; i++) {
          text += line({ type: "turn.started" }) +
            line({
              type: "item.completed",
              item: { id: `m${i}`, type: "agent_message", text: `websocket turn ${i} ${"filler ".repeat(i % 40)}` }
            }) +
            line({ type: "turn.completed", usage })
        }
        fs.writeFileSync(path.join(root, "many", "events.jsonl"), text)
        const size = fs.statSync(path.join(root, "many", "events.jsonl")).size
        // The index is built (and its snapshot written) first; then only the snippets read the log.
        yield* fresh(searchMemory(root, "websocket", { scope: "history", now: NOW, maxResults: 1000 }))
        const real = yield* SessionFs
        let streamed = 0
        const counting = SessionFs.of({
          ...real,
          stream: (file, options) =>
            real.stream(file, options).pipe(Stream.tap((chunk) => Effect.sync(() => (streamed += chunk.length))))
        })
        const results = yield* searchMemory(root, "websocket", { scope: "history", now: NOW, maxResults: 1000 }).pipe(
          Effect.provideService(SessionFs, counting)
        )
        assert.strictEqual(results.length, 1000)
        for (const r of results) assert.include(r.snippet, `websocket turn ${(r.turn ?? 0) - 1}`)
        // A few KiB per hit turn (each is well under 1 KiB): linear in the results, not in the log.
        assert.isAtMost(streamed / results.length, 8 * 1024, `${streamed} bytes streamed for a ${size}-byte log`)
      }).pipe(Effect.provide(nodeLayer())),
    { timeout: 120_000 }
  )
})

const WORDS = ["fix", "in", "ran", "failed", "test", "login", "src", "ts", "npm", "build", "deploy", "cache"]

const Op = Schema.Struct({
  session: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5 })),
  facts: Schema.Array(Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 11 })))).check(
    Schema.isMaxLength(5)
  ),
  remove: Schema.Boolean,
  createdDaysAgo: Schema.Int.check(Schema.isBetween({ minimum: -3, maximum: 400 }))
})

const Query = Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 11 }))).check(
  Schema.isMinLength(1),
  Schema.isMaxLength(3)
)

describe("SearchIndex", () => {
  it.prop(
    "the incremental, pruned top-k equals a from-scratch full scoring after any writes and deletions",
    [
      Schema.Array(Op).check(Schema.isMaxLength(12)),
      Query,
      Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 4 }))
    ],
    ([ops, query, k]) => {
      const incremental = new SearchIndex()
      const state = new Map<string, { facts: Array<string>; created: number }>()
      ops.forEach((op, step) => {
        const name = `s${op.session}`
        if (op.remove) {
          incremental.remove(name)
          state.delete(name)
          return
        }
        const facts = op.facts.map((ws) => ws.map((w) => WORDS[w] ?? "").join(" "))
        const created = NOW - op.createdDaysAgo * DAY
        state.set(name, { facts, created })
        incremental.put(
          sessionDocs(name, `sig${step}`, facts.map((text, i) => ({ chunk: i, offset: 0, createdAt: created, text })))
        )
        // Repack now and then, as searches between writes do.
        if (step % 3 === 0) incremental.search("fix", { maxResults: 1, minScore: 0, now: NOW })
      })
      const scratch = new SearchIndex()
      for (const [name, s] of state) {
        scratch.put(
          sessionDocs(name, "x", s.facts.map((text, i) => ({ chunk: i, offset: 0, createdAt: s.created, text })))
        )
      }
      const text = query.map((w) => WORDS[w] ?? "").join(" ")
      const options = { maxResults: k, minScore: 0, now: NOW }
      const got = incremental.search(text, options).map((h) => [h.chunkId, h.score])
      // An index rebuilt from its packed arrays (what a segment stores) ranks the same.
      assert.deepStrictEqual(
        new SearchIndex(incremental.pack()).search(text, options).map((h) => [h.chunkId, h.score]),
        got
      )
      const want = scratch.scoreAll(text, options).map((h) => [h.chunkId, h.score])
      assert.deepStrictEqual(got, want)
      // And the full scoring agrees with the formula computed naively.
      const docs = [...state].flatMap(([name, s]) =>
        s.facts.map((f, i) => ({ id: `${name}:${i}`, tokens: tokenize(f), created: s.created }))
      )
      const avgdl = docs.length === 0 ? 0 : docs.reduce((n, d) => n + d.tokens.length, 0) / docs.length
      const qt = tokenize(text)
      const naive = docs.map((d) => {
        let score = 0
        for (const q of qt) {
          const f = d.tokens.filter((t) => t === q).length
          if (f === 0) continue
          const df = docs.filter((x) => x.tokens.includes(q)).length
          score += (bm25Idf(docs.length, df) * f * 2.2) /
            (f + 1.2 * (1 - 0.75 + (0.75 * d.tokens.length) / Math.max(avgdl, 1)))
        }
        const age = Math.max(0, NOW - d.created) / DAY
        return { id: d.id, score: score * (1 + 0.1 * Math.pow(2, -age / 30)) }
      }).filter((d) => d.score > 0).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, k)
      assert.deepStrictEqual(want.map(([id]) => id), naive.map((d) => d.id))
    },
    { arbitrary: { runs: 300 } }
  )
})
