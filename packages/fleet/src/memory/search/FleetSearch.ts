/**
 * Search across the fleet (docs/fleet.md#search): the documents local search ranks — one per
 * grounded fact of a memory view, one per retained turn of a log — stored in PostgreSQL with
 * their term statistics, and ranked by the same BM25 + recency rules as `logbook search`. The
 * documents are built by `@logbook/projections` (`sessionSearchDocuments`), tokenised by
 * `@logbook/domain` (`termFrequencies`) and scored by `bm25Score`; PostgreSQL only selects the
 * candidates (a GIN index over a generated `tsvector`) and sums the corpus statistics (document
 * count, total length, document frequency of the query terms) from the stored rows. The same
 * sessions therefore give the same results, in the same order, with the same scores, whether
 * searched locally or in the fleet.
 */
import {
  bm25Idf,
  bm25Score,
  compareRanked,
  DEFAULT_MAX_RESULTS,
  keepsScore,
  termFrequencies,
  tokenize
} from "@logbook/domain"
import type { MemorySearchResult, SearchScope, SearchSource } from "@logbook/projections"
import {
  historySnippet,
  searchResult,
  searchSourceOf,
  sessionHistoryDocuments,
  sessionSearchDocuments
} from "@logbook/projections"
import type { SessionFs, StoreIoError } from "@logbook/store"
import { Clock, Data, Effect, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/** What a fleet search ranks: facts, history (turns), or both merged by score. */
export type FleetSearchScope = SearchScope | "all"

/** Options of {@link searchFleet}; the same meaning as local search's. */
export interface FleetSearchOptions {
  /** Default `facts`. */
  readonly scope?: FleetSearchScope | undefined
  /** Default 6. */
  readonly maxResults?: number | undefined
  /** Compared with the final score (after the recency multiplier); default 0. */
  readonly minScore?: number | undefined
  /** Unix seconds for the recency multiplier; default the `Clock`. */
  readonly now?: number | undefined
}

/** What {@link syncSearchDocuments} did for one scope of a session. */
export type SyncOutcome = "replaced" | "unchanged" | "removed" | "absent"

/** What {@link syncSearchDocuments} did: per scope, and how many documents it wrote. */
export interface SyncSearchReport {
  readonly session: string
  readonly facts: SyncOutcome
  readonly history: SyncOutcome
  readonly documents: number
}

/** Options of {@link syncSearchDocuments}. */
export interface SyncSearchOptions {
  /** Rebuild even when the source file's signature is the one stored (default false). */
  readonly force?: boolean | undefined
  /** Only these scopes (default both). */
  readonly scopes?: ReadonlyArray<SearchScope> | undefined
}

interface ScopeTable {
  readonly scope: SearchScope
  readonly table: string
  readonly chunk: string
}

const TABLES: Record<SearchScope, ScopeTable> = {
  facts: { scope: "facts", table: "facts", chunk: "fact_index" },
  history: { scope: "history", table: "turn_docs", chunk: "turn" }
}

// Lexemes are cut to this many code points (at most 800 bytes, under PostgreSQL's 2047): a cut
// lexeme only widens the candidates, the stored term frequencies decide the score.
const LEXEME_MAX_CODE_POINTS = 200
// A document whose lexemes could exceed this many bytes gets none and is always a candidate
// (a tsvector holds at most 1 MiB of lexemes).
const LEXEME_BUDGET_BYTES = 512 * 1024
// Rows per insert statement (9 parameters each, far below PostgreSQL's 65 535).
const INSERT_BATCH = 500

const lexemeOf = (token: string): string =>
  token.length <= LEXEME_MAX_CODE_POINTS ? token : Array.from(token).slice(0, LEXEME_MAX_CODE_POINTS).join("")

// A tsquery lexeme literal; tokens are letters and digits only, the escapes are belt and braces.
const quoteLexeme = (lexeme: string): string => `'${lexeme.replace(/['\\]/gu, (c) => `\\${c}`)}'`

// PostgreSQL text cannot hold NUL; the stored text is only used for snippets.
const storableText = (text: string): string => text.replace(/\0/gu, "\uFFFD")

interface DocRow {
  readonly session_id: string
  readonly chunk: number
  readonly byte_offset: number
  readonly created_at: number | null
  readonly text: string
  readonly doc_length: number
  readonly term_freqs: string
  readonly lexemes: ReadonlyArray<string>
  readonly overflow: boolean
}

const rowOf = (session: string, doc: {
  readonly chunk: number
  readonly offset: number
  readonly createdAt: number | null
  readonly text: string
}): DocRow => {
  const { length, tf } = termFrequencies(doc.text)
  const lexemes = new Set<string>()
  let bytes = 0
  for (const token of tf.keys()) {
    const lexeme = lexemeOf(token)
    lexemes.add(lexeme)
    bytes += lexeme.length * 3 + 8
  }
  const overflow = bytes > LEXEME_BUDGET_BYTES
  return {
    session_id: session,
    chunk: doc.chunk,
    byte_offset: doc.offset,
    created_at: doc.createdAt,
    text: storableText(doc.text),
    doc_length: length,
    term_freqs: JSON.stringify(Object.fromEntries(tf)),
    lexemes: overflow ? [] : [...lexemes],
    overflow
  }
}

const insertRows = (sql: SqlClient.SqlClient, table: ScopeTable, rows: ReadonlyArray<DocRow>) =>
  Effect.forEach(
    Array.from({ length: Math.ceil(rows.length / INSERT_BATCH) }, (_, i) =>
      rows.slice(i * INSERT_BATCH, (i + 1) * INSERT_BATCH)),
    (batch) => {
      const values = batch.map((row) => {
        const common = {
          session_id: row.session_id,
          [table.chunk]: row.chunk,
          created_at: row.created_at,
          text: row.text,
          doc_length: row.doc_length,
          term_freqs: row.term_freqs,
          lexemes: row.lexemes,
          overflow: row.overflow
        }
        return table.scope === "history" ? { ...common, byte_offset: row.byte_offset } : common
      })
      const [first, ...rest] = values
      return first === undefined
        ? Effect.void
        : Effect.asVoid(sql`insert into ${sql(table.table)} ${sql.insert([first, ...rest])}`)
    },
    { discard: true }
  )

const removeScope = (sql: SqlClient.SqlClient, table: ScopeTable, session: string) =>
  Effect.gen(function*() {
    const gone = yield* sql<{ readonly session_id: string }>`
      delete from search_sources where session_id = ${session} and scope = ${table.scope} returning session_id`
    yield* sql`delete from ${sql(table.table)} where session_id = ${session}`
    return gone.length > 0
  })

// A turn whose events are not contiguous in the log: the streamed rebuild gives way to the
// collected one, which merges the turn's runs as local search does.
class SplitTurn extends Data.TaggedError("SplitTurn")<{ readonly turn: number }> {}

/**
 * Replaces a session's documents of one scope in one transaction: the source row is upserted
 * first (which locks it, so concurrent syncs of one session take turns), the old documents are
 * deleted, `insert` writes the new ones, and the source row gets their count and total length.
 */
const replaceScope = <E, R>(
  sql: SqlClient.SqlClient,
  table: ScopeTable,
  session: string,
  source: SearchSource,
  insert: Effect.Effect<{ readonly count: number; readonly total: number }, E, R>
) =>
  sql.withTransaction(Effect.gen(function*() {
    yield* sql`
      insert into search_sources (session_id, scope, path, signature, doc_count, total_length)
      values (${session}, ${table.scope}, ${source.path}, ${source.signature}, 0, 0)
      on conflict (session_id, scope) do update set
        path = excluded.path, signature = excluded.signature, synced_at = now()`
    yield* sql`delete from ${sql(table.table)} where session_id = ${session}`
    const { count, total } = yield* insert
    yield* sql`
      update search_sources set doc_count = ${count}, total_length = ${total}
      where session_id = ${session} and scope = ${table.scope}`
    return count
  }))

const sumOf = (rows: ReadonlyArray<DocRow>) => ({
  count: rows.length,
  total: rows.reduce((n, row) => n + row.doc_length, 0)
})

// History rows streamed from the log in batches: memory holds one turn and one batch.
const streamedHistory = (sql: SqlClient.SqlClient, sessionsDir: string, session: string) =>
  Effect.suspend(() => {
    const seen = new Set<number>()
    return sessionHistoryDocuments(sessionsDir, session).pipe(
      Stream.mapEffect((doc) =>
        seen.has(doc.chunk)
          ? Effect.fail(new SplitTurn({ turn: doc.chunk }))
          : Effect.sync(() => {
            seen.add(doc.chunk)
            return rowOf(session, doc)
          })
      ),
      Stream.grouped(INSERT_BATCH),
      Stream.runFoldEffect(() => ({ count: 0, total: 0 }), (acc, rows) =>
        Effect.as(insertRows(sql, TABLES.history, rows), {
          count: acc.count + sumOf(rows).count,
          total: acc.total + sumOf(rows).total
        }))
    )
  })

const syncScope = (
  sessionsDir: string,
  session: string,
  table: ScopeTable,
  force: boolean
): Effect.Effect<
  { readonly outcome: SyncOutcome; readonly documents: number },
  SqlError | StoreIoError,
  SqlClient.SqlClient | SessionFs
> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const source = yield* searchSourceOf(sessionsDir, session, table.scope)
    const stored = yield* sql<{ readonly signature: string }>`
      select signature from search_sources where session_id = ${session} and scope = ${table.scope}`
    if (!force && source !== undefined && stored[0]?.signature === source.signature) {
      return { outcome: "unchanged" as const, documents: 0 }
    }
    if (source !== undefined && table.scope === "history") {
      // Streamed; a log that cannot be read, or a split turn, falls through to the collected path.
      const streamed = yield* replaceScope(sql, table, session, source, streamedHistory(sql, sessionsDir, session))
        .pipe(Effect.catch((e) => e._tag === "SqlError" ? Effect.fail(e) : Effect.succeed(undefined)))
      if (streamed !== undefined) return { outcome: "replaced" as const, documents: streamed }
    }
    const docs = source === undefined ? undefined : yield* sessionSearchDocuments(sessionsDir, session, table.scope)
    if (source === undefined || docs === undefined) {
      const removed = yield* sql.withTransaction(removeScope(sql, table, session))
      return { outcome: removed ? "removed" as const : "absent" as const, documents: 0 }
    }
    const rows = docs.map((doc) => rowOf(session, doc))
    yield* replaceScope(sql, table, session, source, Effect.as(insertRows(sql, table, rows), sumOf(rows)))
    return { outcome: "replaced" as const, documents: rows.length }
  })

/**
 * Brings the fleet's search documents of one session up to date with its directory on disk
 * (`session` is the directory's name below `sessionsDir`, which is what results call `session`
 * and chunk ids start with): for each scope, when the source file's signature (size and
 * modification time of `derived/memory.json` or `events.jsonl`) differs from the stored one, the
 * session's documents are rebuilt exactly as local search builds them and replace the stored ones
 * in one transaction; an unchanged signature writes nothing; a source that is gone or unreadable
 * removes the session's documents of that scope. Running it again is idempotent. The replicator
 * calls it after each session's batch.
 *
 * **Gotchas:** history documents are rebuilt from the whole retained log when it changed (the
 * turn texts are not patched in place); a change that keeps both size and modification time is
 * seen at the next change, as in local search.
 */
export const syncSearchDocuments = Effect.fn("FleetSearch.syncSearchDocuments")(
  function*(sessionsDir: string, session: string, options: SyncSearchOptions = {}) {
    const scopes = options.scopes ?? ["facts", "history"]
    const force = options.force === true
    let documents = 0
    const outcome: Record<SearchScope, SyncOutcome> = { facts: "absent", history: "absent" }
    for (const scope of scopes) {
      const done = yield* syncScope(sessionsDir, session, TABLES[scope], force)
      outcome[scope] = done.outcome
      documents += done.documents
    }
    return { session, facts: outcome.facts, history: outcome.history, documents } satisfies SyncSearchReport
  }
)

interface Scored {
  readonly session: string
  readonly chunk: number
  readonly chunkId: string
  readonly score: number
  readonly createdAt: number | null
  readonly scope: SearchScope
}

/** The k best so far in result order (score descending, chunk id ascending). */
const offer = (top: Array<Scored>, k: number, hit: Scored): void => {
  const last = top.length >= k ? top[top.length - 1] : undefined
  if (last !== undefined && compareRanked(hit, last) >= 0) return
  let i = top.length
  while (i > 0) {
    const prev = top[i - 1]
    if (prev === undefined || compareRanked(prev, hit) <= 0) break
    i--
  }
  top.splice(i, 0, hit)
  if (top.length > k) top.pop()
}

const asNumber = (value: unknown): number =>
  typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : Number(value ?? 0)

// The stored frequencies come back as a JSON object; only its own numeric entries count.
const frequencyOf = (tfs: unknown, token: string): number => {
  if (typeof tfs !== "object" || tfs === null || !Object.hasOwn(tfs, token)) return 0
  const value: unknown = Reflect.get(tfs, token)
  return typeof value === "number" ? value : 0
}

interface CandidateRow {
  readonly session_id: string
  readonly chunk: number
  readonly created_at: number | null
  readonly doc_length: number
  readonly tfs: unknown
}

/** The top `k` of one scope, scored exactly as local search scores them. */
const rankScope = (
  sql: SqlClient.SqlClient,
  table: ScopeTable,
  tokens: ReadonlyArray<string>,
  k: number,
  minScore: number,
  now: number
): Effect.Effect<Array<Scored>, SqlError> =>
  Effect.gen(function*() {
    const [stats] = yield* sql<{ readonly n: unknown; readonly total: unknown }>`
      select coalesce(sum(doc_count), 0) as n, coalesce(sum(total_length), 0) as total
      from search_sources where scope = ${table.scope}`
    const n = asNumber(stats?.n)
    if (n === 0) return []
    const avgdl = asNumber(stats?.total) / n
    const terms = [...new Set(tokens)]
    const queries = terms.map((t) => quoteLexeme(lexemeOf(t)))
    const anyTerm = queries.join(" | ")
    const dfRows = yield* sql<{ readonly term: string; readonly df: unknown }>`
      select t.term, (
        select count(*) from ${sql(table.table)} d
        where (d.tsv @@ t.q::tsquery or d.overflow) and d.term_freqs -> t.term is not null
      ) as df
      from unnest(${terms}::text[], ${queries}::text[]) as t(term, q)`
    const idf = new Map(dfRows.map((row) => [row.term, bm25Idf(n, asNumber(row.df))]))
    const idfOf = (token: string): number => idf.get(token) ?? 0
    const top: Array<Scored> = []
    const candidates = sql<CandidateRow>`
      select d.session_id, d.${sql(table.chunk)} as chunk, d.created_at, d.doc_length, (
        select coalesce(jsonb_object_agg(t.term, d.term_freqs -> t.term), '{}'::jsonb)
        from unnest(${terms}::text[]) as t(term) where d.term_freqs -> t.term is not null
      ) as tfs
      from ${sql(table.table)} d
      where d.tsv @@ ${anyTerm}::tsquery or d.overflow`.stream
    yield* Stream.runForEach(candidates, (row) =>
      Effect.sync(() => {
        const createdAt = row.created_at === null ? null : asNumber(row.created_at)
        const score = bm25Score(
          tokens,
          idfOf,
          (token) => frequencyOf(row.tfs, token),
          asNumber(row.doc_length),
          avgdl,
          createdAt,
          now
        )
        if (!keepsScore(score, minScore)) return
        const chunk = asNumber(row.chunk)
        offer(top, k, {
          session: row.session_id,
          chunk,
          chunkId: `${row.session_id}:${chunk}`,
          score,
          createdAt,
          scope: table.scope
        })
      }))
    return top
  })

interface TextRow {
  readonly session_id: string
  readonly chunk: number
  readonly byte_offset: unknown
  readonly text: string
  readonly path: string
}

/** The stored text, path and offset of the hits of one scope, keyed by chunk id. */
const hitDetails = (sql: SqlClient.SqlClient, table: ScopeTable, hits: ReadonlyArray<Scored>) =>
  Effect.gen(function*() {
    if (hits.length === 0) return new Map<string, TextRow>()
    const sessions = hits.map((h) => h.session)
    const chunks = hits.map((h) => String(h.chunk))
    const offset = table.scope === "history" ? sql`d.byte_offset` : sql`0`
    const rows = yield* sql<TextRow>`
      select d.session_id, d.${sql(table.chunk)} as chunk, ${offset} as byte_offset, d.text, s.path
      from unnest(${sessions}::text[], ${chunks}::text[]) as h(session_id, chunk)
      join ${sql(table.table)} d on d.session_id = h.session_id and d.${sql(table.chunk)} = h.chunk::integer
      join search_sources s on s.session_id = d.session_id and s.scope = ${table.scope}`
    return new Map(rows.map((row) => [`${row.session_id}:${asNumber(row.chunk)}`, row]))
  })

/**
 * Searches every session synced into the fleet, with the options and result records of local
 * search (`searchMemory`): `facts` ranks grounded facts, `history` retained turns, `all` both,
 * merged by final score (each scope keeps its own corpus statistics, as two local searches
 * would). An empty or punctuation-only query, or an empty corpus, gives no results. The query is
 * only ever a bound parameter: its tokens select candidates, nothing of it becomes SQL. The
 * statistics and the candidates are read in one repeatable-read snapshot, so a concurrent sync
 * cannot make them disagree.
 */
export const searchFleet = Effect.fn("FleetSearch.searchFleet")(
  function*(query: string, options: FleetSearchOptions = {}) {
    const sql = yield* SqlClient.SqlClient
    const scope = options.scope ?? "facts"
    const k = options.maxResults ?? DEFAULT_MAX_RESULTS
    const minScore = options.minScore ?? 0
    const now = options.now ?? Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const tokens = tokenize(query)
    if (tokens.length === 0 || k <= 0) return [] as Array<MemorySearchResult>
    const scopes: ReadonlyArray<SearchScope> = scope === "all" ? ["facts", "history"] : [scope]
    const { details, hits } = yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`set transaction isolation level repeatable read, read only`
      const hits: Array<Scored> = []
      for (const s of scopes) {
        for (const hit of yield* rankScope(sql, TABLES[s], tokens, k, minScore, now)) offer(hits, k, hit)
      }
      const details = new Map<SearchScope, Map<string, TextRow>>()
      for (const s of scopes) {
        details.set(s, yield* hitDetails(sql, TABLES[s], hits.filter((h) => h.scope === s)))
      }
      return { details, hits }
    }))
    return hits.flatMap((hit): Array<MemorySearchResult> => {
      const row = details.get(hit.scope)?.get(hit.chunkId)
      if (row === undefined) return []
      return [
        searchResult(
          hit.scope,
          hit,
          row.path,
          hit.scope === "history" ? historySnippet(row.text, query) : row.text,
          asNumber(row.byte_offset)
        )
      ]
    })
  }
)
