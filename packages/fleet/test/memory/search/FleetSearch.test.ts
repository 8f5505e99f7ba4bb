/**
 * Fleet search against local search over the same sessions: the real imported sessions of the
 * importer fixtures plus synthetic ones give the same results (ids, order, scores, snippets,
 * paths) from `searchFleet` as from `searchMemory`, for facts and history; re-syncing writes
 * nothing; a changed or deleted memory view replaces or removes the session's documents; queries
 * with no hits, no words or SQL-looking text are just text; documents too large for one tsvector
 * and tokens longer than a lexeme are still ranked exactly.
 */
import { assert, describe, it } from "@effect/vitest"
import type { FleetSearchOptions } from "@logbook/fleet"
import { layerFleetClient, replicateStore, searchFleet, syncSearchDocuments } from "@logbook/fleet"
import type { MemorySearchResult, SearchScope } from "@logbook/projections"
import { importSessions, searchMemory } from "@logbook/projections"
import {
  appendAll,
  ev,
  fleetTestTarget,
  layerFreshFleet,
  mulberry32,
  nodeLayer,
  openLog,
  plantView,
  sessionsRoot,
  testDatabaseIsEmbedded
} from "@logbook/testkit"
import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as path from "node:path"

const NOW = 1_800_000_000
const DAY = 86_400

const realdata = path.join(import.meta.dirname, "..", "..", "..", "..", "projections", "test", "fixtures", "realdata")
const realFiles = fs.readdirSync(realdata, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => fs.readdirSync(path.join(realdata, d.name)).sort().map((f) => path.join(realdata, d.name, f)))

const sessionNames = (root: string): Array<string> =>
  fs.readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith(".")).map((d) =>
    d.name
  ).sort()

const syncAll = (root: string) =>
  Effect.forEach(sessionNames(root), (name) => syncSearchDocuments(root, name), { concurrency: 1 })

const local = (root: string, query: string, scope: SearchScope, maxResults = 10) =>
  searchMemory(root, query, { scope, now: NOW, maxResults, snapshot: false })

const fleet = (query: string, scope: FleetSearchOptions["scope"], maxResults = 10) =>
  searchFleet(query, { scope, now: NOW, maxResults })

/** Same records; scores within 1e-9 relative (they are computed by the same functions). */
const assertSameResults = (
  actual: ReadonlyArray<MemorySearchResult>,
  expected: ReadonlyArray<MemorySearchResult>,
  what: string
) => {
  assert.deepStrictEqual(actual.map((r) => r.chunk_id), expected.map((r) => r.chunk_id), what)
  actual.forEach((r, i) => {
    const e = expected[i]
    assert.isDefined(e)
    if (e === undefined) return
    assert.closeTo(r.score, e.score, Math.abs(e.score) * 1e-9, `${what}: score of ${r.chunk_id}`)
    assert.deepStrictEqual({ ...r, score: 0 }, { ...e, score: 0 }, `${what}: ${r.chunk_id}`)
  })
}

/** A synthetic session with a log of a few turns (history documents) and a host-written view. */
const syntheticLog = (root: string) =>
  Effect.scoped(Effect.gen(function*() {
    const log = yield* openLog(root, "synthetic-log")
    yield* appendAll(log, [
      ev.threadStarted(),
      ev.turnStarted("2026-12-01T10:00:00.000+00:00"),
      ev.msg("The websocket test is flaky: ECONNREFUSED on port 8080 when the server restarts"),
      ev.completed(),
      ev.turnStarted("2026-12-02T10:00:00.000+00:00"),
      ev.msg("Fixed the flaky websocket reconnect; npm test passes"),
      ev.failed("npm test failed: websocket timeout"),
      ev.turnStarted("2026-12-03T10:00:00.000+00:00"),
      ev.msg(`A long turn: ${"padding words around the match ".repeat(20)} needle at the end of it`),
      ev.completed()
    ])
    yield* log.flush
  }))

const syntheticSessions = (root: string) =>
  Effect.gen(function*() {
    yield* syntheticLog(root)
    plantView(
      root,
      "synthetic-a",
      [
        "fix the flaky login test",
        "npm test failed: websocket ECONNREFUSED",
        null,
        "update the readme"
      ],
      NOW - 3 * DAY,
      NOW - 3 * DAY
    )
    plantView(root, "synthetic-b", ["login works", "the websocket server restarts on port 8080"], NOW - 40 * DAY, NOW)
    plantView(root, "synthetic-c", ["fix the login test"], NOW - 3 * DAY, NOW)
  })

const tableCounts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ readonly facts: unknown; readonly turn_docs: unknown; readonly search_sources: unknown }>`
    select (select count(*) from facts) as facts, (select count(*) from turn_docs) as turn_docs,
      (select count(*) from search_sources) as search_sources`
  return { facts: Number(row?.facts), turn_docs: Number(row?.turn_docs), search_sources: Number(row?.search_sources) }
})

/** A new sessions root, and a fleet whose search tables are empty (the database is shared by the file). */
const freshRoot = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`truncate facts, turn_docs, search_sources`
  return yield* sessionsRoot("fleet-search")
})

const QUERIES = [
  "test",
  "websocket flaky test",
  "login",
  "npm run build",
  "error file",
  "the the the",
  "ECONNREFUSED 8080",
  "claude code session",
  "fix bug in parser",
  "README.md"
]

describe("FleetSearch", () => {
  it.layer(Layer.merge(layerFreshFleet, nodeLayer()), { timeout: 120_000 })((it) => {
    it.effect("returns the same top results as local search over the same real and synthetic sessions", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        const report = yield* importSessions({ sessionsDir: root, format: "auto", paths: realFiles })
        assert.isAtLeast(report.sessions_created, 5, JSON.stringify(report.sources))
        yield* syntheticSessions(root)
        const synced = yield* syncAll(root)
        assert.isAtLeast(synced.reduce((n, r) => n + r.documents, 0), 50)
        // Queries from the corpus itself too: the first words of some real facts.
        const fromFacts = (yield* local(root, "the", "facts", 20)).map((r) =>
          r.snippet.split(/\s+/u).slice(0, 3).join(" ")
        )
        let compared = 0
        for (const query of [...QUERIES, ...fromFacts]) {
          for (const scope of ["facts", "history"] as const) {
            const expected = yield* local(root, query, scope)
            const actual = yield* fleet(query, scope)
            assertSameResults(actual, expected, `${scope} "${query}"`)
            compared += expected.length
          }
        }
        assert.isAtLeast(compared, 100)
      }))

    it.effect("replicating a store indexes its sessions: fleet search then agrees with local search", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        yield* importSessions({ sessionsDir: root, format: "auto", paths: realFiles.slice(0, 4) })
        yield* syntheticLog(root)
        const report = yield* replicateStore(root, { originHost: "runner-1" })
        assert.strictEqual(report.conflicts.length, 0)
        const sql = yield* SqlClient.SqlClient
        const indexed = yield* sql<{ readonly session_id: string }>`
          select distinct session_id from search_sources order by session_id`
        assert.deepStrictEqual(indexed.map((r) => r.session_id), sessionNames(root))
        for (const query of ["websocket flaky test", "error file", "the", "npm"]) {
          for (const scope of ["facts", "history"] as const) {
            assertSameResults(yield* fleet(query, scope), yield* local(root, query, scope), `${scope} "${query}"`)
          }
        }
        const again = yield* replicateStore(root, { originHost: "runner-1" })
        assert.strictEqual(again.inserted, 0)
      }))

    it.effect("a replicator told not to index search writes no search documents", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        yield* syntheticLog(root)
        const report = yield* replicateStore(root, { originHost: "runner-1", searchDocuments: false })
        assert.deepStrictEqual(report.sessions.map((r) => r.session), ["synthetic-log"])
        assert.deepStrictEqual(yield* tableCounts, { facts: 0, turn_docs: 0, search_sources: 0 })
      }))

    it.effect("random corpora full of ties rank the same as locally after random edits and removals", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        const prng = mulberry32(19)
        const words = ["fix", "test", "npm", "login", "build", "error", "ts", "src", "flaky", "ok", "é", "日本"]
        const fact = () =>
          Array.from({ length: prng.int(0, 6) }, () => prng.pick(words)).join(prng.pick([" ", "/", "-"]))
        // Every write gets a new mtime, so a rewrite of the same size is still a new signature.
        let clock = NOW
        const plant = (i: number) =>
          plantView(
            root,
            `s${i}`,
            Array.from({ length: prng.int(0, 8) }, () => prng.chance(0.1) ? null : fact()),
            NOW - prng.int(0, 3) * 10 * DAY,
            ++clock
          )
        for (let i = 0; i < 25; i++) plant(i)
        let compared = 0
        for (let step = 1; step <= 3; step++) {
          yield* syncAll(root)
          for (let q = 0; q < 15; q++) {
            const query = Array.from({ length: prng.int(1, 3) }, () => prng.pick(words)).join(" ")
            const maxResults = prng.int(1, 12)
            const expected = yield* local(root, query, "facts", maxResults)
            assertSameResults(yield* fleet(query, "facts", maxResults), expected, `step ${step} "${query}"`)
            compared += expected.length
          }
          for (let e = 0; e < 5; e++) {
            const i = prng.int(0, 24)
            if (prng.chance(0.3)) fs.rmSync(path.join(root, `s${i}`, "derived", "memory.json"), { force: true })
            else plant(i)
          }
        }
        assert.isAtLeast(compared, 100)
      }))

    it.effect.skipIf(testDatabaseIsEmbedded())(
      "concurrent syncs of one session take turns and leave one set of documents",
      () =>
        Effect.gen(function*() {
          const { root } = yield* freshRoot
          yield* syntheticSessions(root)
          const target = yield* fleetTestTarget
          const many = Effect.all(
            Array.from({ length: 6 }, () => syncSearchDocuments(root, "synthetic-a", { force: true })),
            { concurrency: 6 }
          ).pipe(Effect.provide(layerFleetClient(target, { maxConnections: 6 })))
          const reports = yield* many
          assert.deepStrictEqual(reports.map((r) => r.facts), Array.from({ length: 6 }, () => "replaced"))
          assert.deepStrictEqual(yield* tableCounts, { facts: 3, turn_docs: 0, search_sources: 1 })
          assert.deepStrictEqual((yield* fleet("test readme", "facts")).map((r) => r.chunk_id), [
            "synthetic-a:3",
            "synthetic-a:0",
            "synthetic-a:1"
          ])
        })
    )

    it.effect("a log with more turns than one insert batch is streamed in batches and ranks as locally", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        const prng = mulberry32(7)
        const words = ["deploy", "rollback", "cache", "miss", "retry", "timeout", "green", "red"]
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "long-log")
          const events = [ev.threadStarted()]
          for (let turn = 0; turn < 620; turn++) {
            events.push(ev.turnStarted(`2026-11-${String(1 + (turn % 28)).padStart(2, "0")}T10:00:00.000+00:00`))
            events.push(ev.msg(Array.from({ length: prng.int(1, 9) }, () => prng.pick(words)).join(" ")))
            events.push(turn % 7 === 0 ? ev.failed(`${prng.pick(words)} failed`) : ev.completed())
          }
          yield* log.appendAll(events)
          yield* log.flush
        }))
        const report = yield* syncSearchDocuments(root, "long-log")
        assert.strictEqual(report.history, "replaced")
        assert.strictEqual(report.documents, 620)
        for (const query of ["deploy", "cache miss", "timeout failed red", "green green"]) {
          const expected = yield* local(root, query, "history", 25)
          assert.lengthOf(expected, 25)
          assertSameResults(yield* fleet(query, "history", 25), expected, query)
        }
      }))

    it.effect("a second sync writes nothing and a forced one rewrites the same documents", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        yield* syntheticSessions(root)
        const first = yield* syncAll(root)
        assert.isTrue(first.every((r) => r.facts !== "unchanged" && r.history !== "unchanged"))
        const before = yield* tableCounts
        const ranked = yield* fleet("websocket test", "all")
        const again = yield* syncAll(root)
        assert.deepStrictEqual(
          again.map((r) => [r.facts, r.history, r.documents]),
          first.map((
            r
          ) => [r.facts === "replaced" ? "unchanged" : r.facts, r.history === "replaced" ? "unchanged" : r.history, 0])
        )
        const forced = yield* Effect.forEach(
          sessionNames(root),
          (name) => syncSearchDocuments(root, name, { force: true })
        )
        assert.deepStrictEqual(forced.map((r) => r.documents), first.map((r) => r.documents))
        assert.deepStrictEqual(yield* tableCounts, before)
        assert.deepStrictEqual(yield* fleet("websocket test", "all"), ranked)
      }))

    it.effect("a changed memory view replaces the session's facts and a deleted one removes them", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        yield* syntheticSessions(root)
        yield* syncAll(root)
        assert.deepStrictEqual((yield* fleet("readme", "facts")).map((r) => r.chunk_id), ["synthetic-a:3"])
        plantView(root, "synthetic-a", ["rewrote the changelog"], NOW - DAY, NOW + 10)
        const changed = yield* syncSearchDocuments(root, "synthetic-a")
        assert.strictEqual(changed.facts, "replaced")
        assert.strictEqual(changed.history, "absent")
        assert.deepStrictEqual(yield* fleet("readme", "facts"), [])
        assert.deepStrictEqual(yield* fleet("changelog", "facts"), yield* local(root, "changelog", "facts"))
        assert.deepStrictEqual(yield* fleet("login test", "facts"), yield* local(root, "login test", "facts"))
        const sql = yield* SqlClient.SqlClient
        const sources = yield* sql<{ readonly doc_count: number }>`
          select doc_count from search_sources where session_id = 'synthetic-a' and scope = 'facts'`
        assert.deepStrictEqual(sources.map((s) => s.doc_count), [1])
        fs.rmSync(path.join(root, "synthetic-a", "derived", "memory.json"))
        assert.strictEqual((yield* syncSearchDocuments(root, "synthetic-a")).facts, "removed")
        assert.strictEqual((yield* syncSearchDocuments(root, "synthetic-a")).facts, "absent")
        assert.deepStrictEqual(yield* fleet("changelog", "facts"), [])
        assertSameResults(yield* fleet("login", "facts"), yield* local(root, "login", "facts"), "after removal")
      }))

    it.effect("a query with no hits, no words or an empty fleet gives no results", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        assert.deepStrictEqual(yield* fleet("websocket", "all"), [])
        yield* syntheticSessions(root)
        yield* syncAll(root)
        assert.deepStrictEqual(yield* fleet("zzyzx-unknown-word", "facts"), [])
        assert.deepStrictEqual(yield* fleet("zzyzx", "history"), [])
        assert.deepStrictEqual(yield* fleet("", "all"), [])
        assert.deepStrictEqual(yield* fleet("  ?!.-- ", "all"), [])
        assert.deepStrictEqual(yield* searchFleet("websocket", { now: NOW, minScore: 1e9 }), [])
      }))

    it.effect("SQL-looking queries and facts are just text", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        plantView(
          root,
          "bobby",
          ["robert'); drop table facts; -- was here", "o'brien \\ wrote 'quoted' & | ! : * ( ) text"],
          NOW,
          NOW
        )
        plantView(root, "other", ["nothing to see"], NOW, NOW)
        yield* syncAll(root)
        for (
          const query of [
            "'; drop table facts; --",
            "robert'); delete from search_sources; --",
            "o'brien",
            "\\ & | ! : * ( )",
            "'quoted' <-> text:*",
            "$1 $2 ? ?? %s"
          ]
        ) {
          assertSameResults(yield* fleet(query, "facts"), yield* local(root, query, "facts"), query)
        }
        assert.deepStrictEqual((yield* fleet("robert drop", "facts")).map((r) => r.chunk_id), ["bobby:0"])
        assert.deepStrictEqual((yield* fleet("o'brien", "facts")).map((r) => r.snippet), [
          "o'brien \\ wrote 'quoted' & | ! : * ( ) text"
        ])
        const counts = yield* tableCounts
        assert.deepStrictEqual(counts, { facts: 3, turn_docs: 0, search_sources: 2 })
      }))

    it.effect("candidates and document frequencies can come from the GIN indexes of the generated tsvectors", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        yield* syntheticSessions(root)
        yield* syncAll(root)
        const sql = yield* SqlClient.SqlClient
        for (const [table, index] of [["facts", "facts_tsv"], ["turn_docs", "turn_docs_tsv"]] as const) {
          const plan = yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`set local enable_seqscan = off`
            return yield* sql<Record<string, string>>`
              explain select count(*) from ${sql(table)} d
              where (d.tsv @@ ${"'websocket' | 'test'"}::tsquery or d.overflow) and d.term_freqs -> 'test' is not null`
          }))
          const text = plan.map((row) => Object.values(row).join(" ")).join("\n")
          assert.include(text, index, text)
        }
      }))

    it.effect("a document too large for one tsvector and tokens longer than a lexeme rank as locally", () =>
      Effect.gen(function*() {
        const { root } = yield* freshRoot
        const many = Array.from({ length: 30_000 }, (_, i) => `w${i.toString(36)}x${"q".repeat(12)}`).join(" ")
        const long = "a".repeat(300)
        plantView(root, "huge", [`${many} needle`, `${long}b tail`, `${long}c tail`], NOW - DAY, NOW)
        plantView(root, "small", ["needle in a haystack", `${long}b again`], NOW - 5 * DAY, NOW)
        yield* syncAll(root)
        const sql = yield* SqlClient.SqlClient
        const overflow = yield* sql<{ readonly fact_index: number }>`select fact_index from facts where overflow`
        assert.deepStrictEqual(overflow.map((r) => r.fact_index), [0])
        for (
          const query of ["needle", "haystack needle", `${long}b`, `${long}c tail`, `${long}d`, "w1x" + "q".repeat(12)]
        ) {
          const expected = yield* local(root, query, "facts")
          assertSameResults(yield* fleet(query, "facts"), expected, query.slice(0, 40))
        }
        assert.deepStrictEqual((yield* fleet(`${long}b`, "facts")).map((r) => r.chunk_id), ["huge:1", "small:1"])
        assert.deepStrictEqual(yield* fleet(`${long}d`, "facts"), [])
      }))
  })
})
