/**
 * The on-disk segmented index (docs/search.md#on-disk-index): whatever the segment splits, merges
 * and deletions, a query returns exactly what one from-scratch index of the same documents
 * returns (ids, order, scores), also after reopening from the manifest; and a damaged or
 * truncated segment is detected by its checksum or footer and rebuilt, never ranked.
 */
import { assert, describe, it } from "@effect/vitest"
import { nodeLayer, plantView, sessionsRoot, tempDir } from "@logbook/testkit"
import { Effect, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SearchIndex, sessionDocs } from "../../../../src/memory/search/internal/searchIndex.ts"
import {
  commit,
  mergeSegments,
  openIndex,
  searchSegments,
  SegmentedIndex,
  writeSegment
} from "../../../../src/memory/search/internal/segmentedIndex.ts"
import { refreshSearchIndex, searchMemory } from "../../../../src/memory/search/MemorySearch.ts"
import { SearchIndexCache } from "../../../../src/memory/search/SearchIndexCache.ts"

const DAY = 86_400
const NOW = 1_800_000_000
const COMMON = ["fix", "in", "ran", "failed", "test", "src"]
const WORDS = ["fix", "in", "ran", "failed", "test", "login", "src", "ts", "npm", "build", "deploy", "cache"]

const fresh = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, Layer.fresh(SearchIndexCache.layer))

const Op = Schema.Struct({
  session: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 7 })),
  facts: Schema.Array(Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 11 })))).check(
    Schema.isMaxLength(5)
  ),
  remove: Schema.Boolean,
  split: Schema.Boolean,
  merge: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4 })),
  createdDaysAgo: Schema.Int.check(Schema.isBetween({ minimum: -3, maximum: 400 }))
})

const Query = Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 11 }))).check(
  Schema.isMinLength(1),
  Schema.isMaxLength(3)
)

const ranked = (hits: ReadonlyArray<{ readonly chunkId: string; readonly score: number }>) =>
  hits.map((h) => [h.chunkId, h.score] as const)

describe("SegmentedIndex", () => {
  it.effect.prop(
    "random segment splits, merges and deletions rank exactly as one from-scratch index",
    {
      ops: Schema.Array(Op).check(Schema.isMaxLength(16)),
      queries: Schema.Array(Query).check(Schema.isMinLength(1), Schema.isMaxLength(4)),
      k: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 8 }))
    },
    ({ k, ops, queries }) =>
      Effect.gen(function*() {
        const root = yield* tempDir("logbook-segments-prop-")
        const index = new SegmentedIndex(root, "facts")
        let builder = new SearchIndex()
        const state = new Map<string, { facts: Array<string>; created: number }>()
        const flush = Effect.gen(function*() {
          const packed = builder.pack()
          builder = new SearchIndex()
          if (packed.sessionNames.length === 0) return
          index.add(yield* writeSegment(index, packed))
          yield* commit(index)
        })
        for (const [step, op] of ops.entries()) {
          const name = `s${op.session}`
          if (op.remove) {
            index.remove(name)
            builder.remove(name)
            state.delete(name)
          } else {
            const facts = op.facts.map((ws) => ws.map((w) => WORDS[w] ?? "").join(" "))
            const created = NOW - op.createdDaysAgo * DAY
            state.set(name, { facts, created })
            builder.put(
              sessionDocs(
                name,
                `sig${step}`,
                facts.map((text, i) => ({ chunk: i, offset: 0, createdAt: created, text }))
              )
            )
          }
          if (op.split) {
            yield* flush
            // Every other merge reads postings 16 bytes at a time: runs straddle windows.
            if (op.merge > 0) yield* mergeSegments(index, op.merge, undefined, step % 2 === 0 ? 16 : undefined)
          }
        }
        yield* flush
        yield* commit(index)
        const scratch = new SearchIndex()
        for (const [name, s] of state) {
          scratch.put(
            sessionDocs(name, "x", s.facts.map((text, i) => ({ chunk: i, offset: 0, createdAt: s.created, text })))
          )
        }
        const reopened = (yield* openIndex(root, "facts")).index
        for (const query of queries) {
          const text = query.map((w) => WORDS[w] ?? "").join(" ")
          const options = { maxResults: k, minScore: 0, now: NOW }
          const want = ranked(scratch.scoreAll(text, options))
          const got = ranked(yield* searchSegments(index, text, options))
          assert.deepStrictEqual(got.map(([id]) => id), want.map(([id]) => id), `${text}: ids and order`)
          got.forEach(([, score], i) => assert.closeTo(score, want[i]?.[1] ?? Number.NaN, 1e-9))
          // Bit for bit, in fact: the statistics combine exactly.
          assert.deepStrictEqual(got, want)
          assert.deepStrictEqual(ranked(yield* searchSegments(reopened, text, options)), want)
        }
      }).pipe(Effect.provide(nodeLayer())),
    { arbitrary: { runs: 60 }, timeout: 120_000 }
  )

  it.effect.prop(
    "queries mixing rare and common words rank exactly as one from-scratch index (the pruned top-k)",
    {
      // Word w of a fact is COMMON[w] below 6, else a rare word of its own (few documents hold it).
      sessions: Schema.Array(
        Schema.Array(
          Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 40 }))).check(
            Schema.isMaxLength(8)
          )
        ).check(Schema.isMaxLength(12))
      ).check(Schema.isMinLength(1), Schema.isMaxLength(24)),
      splits: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })),
      deleted: Schema.Int.check(Schema.isBetween({ minimum: -1, maximum: 23 })),
      queries: Schema.Array(
        Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 40 }))).check(
          Schema.isMinLength(1),
          Schema.isMaxLength(3)
        )
      ).check(Schema.isMinLength(1), Schema.isMaxLength(6)),
      k: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 6 }))
    },
    ({ deleted, k, queries, sessions, splits }) =>
      Effect.gen(function*() {
        const word = (w: number) => (w < 6 ? COMMON[w] ?? "in" : `rare${w}`)
        const root = yield* tempDir("logbook-segments-pruned-")
        const index = new SegmentedIndex(root, "facts")
        const scratch = new SearchIndex()
        const per = Math.ceil(sessions.length / splits)
        for (let from = 0; from < sessions.length; from += per) {
          const builder = new SearchIndex()
          sessions.slice(from, from + per).forEach((facts, i) => {
            const name = `s${from + i}`
            const docs = facts.map((ws, chunk) => ({
              chunk,
              offset: 0,
              createdAt: NOW - ((from + i) % 9) * 40 * DAY,
              text: ws.map(word).join(" ")
            }))
            builder.put(sessionDocs(name, "sig", docs))
            if (from + i !== deleted) scratch.put(sessionDocs(name, "x", docs))
          })
          const packed = builder.pack()
          if (packed.sessionNames.length > 0) index.add(yield* writeSegment(index, packed))
        }
        index.remove(`s${deleted}`)
        for (const query of queries) {
          const text = query.map(word).join(" ")
          const options = { maxResults: k, minScore: 0, now: NOW }
          assert.deepStrictEqual(
            ranked(yield* searchSegments(index, text, options)),
            ranked(scratch.scoreAll(text, options))
          )
        }
      }).pipe(Effect.provide(nodeLayer())),
    { arbitrary: { runs: 80 }, timeout: 120_000 }
  )

  it.effect("keeps several segments and a deletion set on disk for an incremental store", () =>
    Effect.gen(function*() {
      const { root } = yield* sessionsRoot("projections")
      for (let i = 0; i < 6; i++) plantView(root, `s${i}`, [`deploy step ${i}`, "cache warm"], NOW - i * DAY, 1_000)
      yield* fresh(refreshSearchIndex(root, "facts", { flushDocs: 4, maxSegments: 100 }))
      const segments = () => fs.readdirSync(root).filter((n) => n.endsWith(".seg"))
      assert.strictEqual(segments().length, 3)
      plantView(root, "s0", ["deploy again"], NOW, 2_000)
      fs.rmSync(path.join(root, "s5"), { recursive: true })
      const after = yield* fresh(refreshSearchIndex(root, "facts", { flushDocs: 4, maxSegments: 100 }))
      assert.strictEqual(after.stats.rebuilt, 1)
      assert.strictEqual(after.stats.removed, 1)
      assert.strictEqual(segments().length, 4)
      const manifest = JSON.parse(fs.readFileSync(path.join(root, ".logbook-search-facts.idx"), "utf8"))
      const deleted = Object.values(manifest.deleted).flat().sort()
      assert.deepStrictEqual(deleted, ["s0", "s5"])
      // Too many segments: the smallest merge into one, deletions dropped with them.
      yield* fresh(refreshSearchIndex(root, "facts", { flushDocs: 4, maxSegments: 1 }))
      plantView(root, "s1", ["deploy later"], NOW, 3_000)
      yield* fresh(refreshSearchIndex(root, "facts", { flushDocs: 4, maxSegments: 1 }))
      assert.strictEqual(segments().length, 1)
      const disk = yield* fresh(searchMemory(root, "deploy cache", { now: NOW, maxResults: 20 }))
      const memory = yield* fresh(searchMemory(root, "deploy cache", { now: NOW, maxResults: 20, snapshot: false }))
      assert.deepStrictEqual(disk, memory)
      assert.strictEqual(disk.length, 8)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("leaves on disk exactly the segments its manifest names, also after merges and a crashed build's leftovers", () =>
    Effect.gen(function*() {
      const { root } = yield* sessionsRoot("projections")
      for (let i = 0; i < 9; i++) plantView(root, `s${i}`, [`deploy step ${i}`, "cache warm"], NOW - i * DAY, 1_000)
      const segments = () => fs.readdirSync(root).filter((n) => n.endsWith(".seg")).sort()
      const named = () =>
        JSON.parse(fs.readFileSync(path.join(root, ".logbook-search-facts.idx"), "utf8")).segments
          .map((s: { readonly file: string }) => s.file).sort()
      // Five flushes, merged down to two segments: the merged-away files go as each merge commits.
      yield* fresh(refreshSearchIndex(root, "facts", { flushDocs: 4, maxSegments: 2 }))
      assert.isAtMost(named().length, 2)
      assert.deepStrictEqual(segments(), named())
      // A segment file no manifest names (a build killed before its commit) goes at the next refresh that changes something.
      const stale = ".logbook-search-facts-999-1.seg"
      fs.writeFileSync(path.join(root, stale), "not a segment", { mode: 0o600 })
      plantView(root, "s3", ["deploy again"], NOW, 2_000)
      yield* fresh(refreshSearchIndex(root, "facts", { flushDocs: 4, maxSegments: 2 }))
      assert.isFalse(fs.existsSync(path.join(root, stale)))
      assert.deepStrictEqual(segments(), named())
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a bit flipped in a segment is caught by its checksum and the segment rebuilt", () =>
    Effect.gen(function*() {
      const { root } = yield* sessionsRoot("projections")
      for (let i = 0; i < 5; i++) plantView(root, `s${i}`, [`login test ${i}`, "npm build"], NOW - i * DAY)
      const options = { now: NOW, maxResults: 10 }
      yield* fresh(refreshSearchIndex(root, "facts", { flushDocs: 4 }))
      const want = yield* fresh(searchMemory(root, "login npm", { ...options, snapshot: false }))
      const segs = fs.readdirSync(root).filter((n) => n.endsWith(".seg"))
      assert.strictEqual(segs.length, 3)
      for (const seg of segs) {
        // Byte 8 is the first dictionary block, which every query of this corpus reads.
        const file = path.join(root, seg)
        const bytes = fs.readFileSync(file)
        bytes[8] = (bytes[8] ?? 0) ^ 0x20
        fs.writeFileSync(file, bytes)
      }
      assert.deepStrictEqual(yield* fresh(searchMemory(root, "login npm", options)), want)
      // The damaged files were replaced: the next process opens only checked segments.
      const again = yield* fresh(refreshSearchIndex(root, "facts"))
      assert.strictEqual(again.stats.rebuilt, 0)
      for (const seg of segs) assert.isFalse(fs.existsSync(path.join(root, seg)))
      assert.deepStrictEqual(yield* fresh(searchMemory(root, "login npm", options)), want)
      // A flip in a term's postings or a document block is caught the same way.
      for (const seg of fs.readdirSync(root).filter((n) => n.endsWith(".seg"))) {
        const file = path.join(root, seg)
        const bytes = fs.readFileSync(file)
        for (let at = 9; at < bytes.length - 200; at += 7) bytes[at] = (bytes[at] ?? 0) ^ 0x01
        fs.writeFileSync(file, bytes)
      }
      assert.deepStrictEqual(yield* fresh(searchMemory(root, "login npm", options)), want)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a truncated segment or manifest is detected and rebuilt", () =>
    Effect.gen(function*() {
      const { root } = yield* sessionsRoot("projections")
      for (let i = 0; i < 5; i++) plantView(root, `s${i}`, [`cache miss ${i}`, "deploy"], NOW - i * DAY)
      const options = { now: NOW, maxResults: 10 }
      const want = yield* fresh(searchMemory(root, "cache deploy", { ...options, snapshot: false }))
      yield* fresh(refreshSearchIndex(root, "facts", { flushDocs: 4 }))
      const [first] = fs.readdirSync(root).filter((n) => n.endsWith(".seg"))
      if (first === undefined) return assert.fail("no segment written")
      const file = path.join(root, first)
      fs.truncateSync(file, Math.floor(fs.statSync(file).size / 2))
      const after = yield* fresh(refreshSearchIndex(root, "facts"))
      assert.isTrue(after.stats.fromSnapshot)
      assert.isAbove(after.stats.rebuilt, 0)
      assert.deepStrictEqual(yield* fresh(searchMemory(root, "cache deploy", options)), want)
      const manifest = path.join(root, ".logbook-search-facts.idx")
      fs.truncateSync(manifest, 10)
      const rebuilt = yield* fresh(refreshSearchIndex(root, "facts"))
      assert.isFalse(rebuilt.stats.fromSnapshot)
      assert.strictEqual(rebuilt.stats.rebuilt, 5)
      assert.deepStrictEqual(yield* fresh(searchMemory(root, "cache deploy", options)), want)
    }).pipe(Effect.provide(nodeLayer())))
})
