/**
 * The search tables of the fleet (migration 3, docs/fleet.md#search): one row per fact and per
 * retained turn holding what BM25 needs (term frequencies as `jsonb`, length in tokens, creation
 * time), a generated `tsvector` with a GIN index that only selects candidates, and one row per
 * session and scope with its document count and total length, so the corpus statistics of a query
 * are sums over sessions rather than scans of documents.
 *
 * **Gotchas:** the `tsvector` is built from `lexemes` (the documents' own tokens, cut to a bounded
 * length), never with PostgreSQL's text parser, which splits words differently from
 * `tokenize`; a document too large for one `tsvector` has no lexemes and `overflow` set, and is
 * always a candidate.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

/** Creates `search_sources`, `facts` and `turn_docs`. */
export const searchSchema = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Per session and scope: where its documents came from and the sums the corpus statistics need.
  yield* sql`
    create table search_sources (
      session_id text not null,
      scope text not null check (scope in ('facts', 'history')),
      path text not null,
      signature text not null,
      doc_count integer not null,
      total_length bigint not null,
      synced_at timestamptz not null default now(),
      primary key (session_id, scope)
    )`
  // One grounded fact of a session's memory view.
  yield* sql`
    create table facts (
      session_id text not null,
      fact_index integer not null,
      created_at double precision,
      text text not null,
      doc_length integer not null,
      term_freqs jsonb not null,
      lexemes text[] not null,
      overflow boolean not null default false,
      tsv tsvector generated always as (array_to_tsvector(lexemes)) stored,
      primary key (session_id, fact_index)
    )`
  yield* sql`create index facts_tsv on facts using gin (tsv)`
  yield* sql`create index facts_overflow on facts (session_id) where overflow`
  // One retained turn of a session's log.
  yield* sql`
    create table turn_docs (
      session_id text not null,
      turn integer not null,
      byte_offset bigint not null,
      created_at double precision,
      text text not null,
      doc_length integer not null,
      term_freqs jsonb not null,
      lexemes text[] not null,
      overflow boolean not null default false,
      tsv tsvector generated always as (array_to_tsvector(lexemes)) stored,
      primary key (session_id, turn)
    )`
  yield* sql`create index turn_docs_tsv on turn_docs using gin (tsv)`
  yield* sql`create index turn_docs_overflow on turn_docs (session_id) where overflow`
})
