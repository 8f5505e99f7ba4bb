/**
 * The fleet database schema, as migrations versioned in the repo and run through `effect/sql`'s
 * migrator (recorded in `logbook_migrations`, each in its own transaction, a concurrent run waits
 * on the migrator's lock). docs/fleet.md describes every table.
 *
 * **Gotchas:** a migration, once released, is never edited: a fleet database that already ran it
 * would silently differ from a new one. Change the schema with a new migration whose id is the
 * next number: the migrator only runs ids above the highest it has recorded, so a lower id
 * added later would never run on an existing fleet.
 */
import { Effect } from "effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { searchSchema } from "./internal/searchSchema.ts"

/** The table where the migrator records which migrations ran. */
export const FLEET_MIGRATIONS_TABLE = "logbook_migrations"

const baseSchema = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One row per replicated session; the manifest fields are copied when the manifest changes.
  yield* sql`
    create table sessions (
      session_id text primary key,
      origin_host text not null,
      manifest jsonb,
      status text,
      created_at timestamptz,
      updated_at timestamptz,
      current_epoch integer not null default 0,
      first_replicated_at timestamptz not null default now(),
      last_replicated_at timestamptz not null default now()
    )`
  // A cap rewrite restarts the log's byte offsets: each incarnation of the log is an epoch.
  yield* sql`
    create table session_epochs (
      session_id text not null references sessions (session_id) on delete cascade,
      epoch integer not null,
      first_line_sha256 text,
      retained_turn_base bigint,
      started_at timestamptz not null default now(),
      primary key (session_id, epoch)
    )`
  // Every acknowledged line, byte for byte (without its newline), keyed by where it sits.
  yield* sql`
    create table events (
      session_id text not null,
      epoch integer not null,
      byte_offset bigint not null,
      length integer not null,
      sha256 text not null,
      line bytea not null,
      event jsonb,
      event_type text,
      turn bigint,
      ts timestamptz,
      primary key (session_id, epoch, byte_offset),
      foreign key (session_id, epoch) references session_epochs (session_id, epoch) on delete cascade
    )`
  yield* sql`create index events_type_ts on events (event_type, ts)`
  yield* sql`create index events_turn on events (session_id, epoch, turn)`
  // The session directory's other regular files, replaced when they change.
  yield* sql`
    create table files (
      session_id text not null references sessions (session_id) on delete cascade,
      path text not null,
      size bigint not null,
      sha256 text not null,
      content bytea not null,
      updated_at timestamptz not null default now(),
      primary key (session_id, path)
    )`
  // Where replication of a session stands: the next byte to read in the epoch's log.
  yield* sql`
    create table replication_cursors (
      session_id text primary key references sessions (session_id) on delete cascade,
      epoch integer not null,
      byte_offset bigint not null,
      updated_at timestamptz not null default now()
    )`
})

// Replication: the cursor also carries the turn numbering where it stands, so a
// batch that starts mid-log numbers its lines' turns without rescanning the epoch.
const replicationTurnState = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    alter table replication_cursors
      add column turn_count bigint not null default 0,
      add column open_turn bigint`
})

// Search documents became redacted text (docs/security.md): the ones stored before are dropped
// with their sources, so the next replication rebuilds every session's documents redacted.
const redactedSearchDocuments = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`delete from facts`
  yield* sql`delete from turn_docs`
  yield* sql`delete from search_sources`
})

/** Every fleet migration, by id and name. Append new ones; never edit or renumber. */
export const fleetMigrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "1_base_schema": baseSchema,
  "2_replication_turn_state": replicationTurnState,
  "3_search_documents": searchSchema,
  "4_redacted_search_documents": redactedSearchDocuments
}

/**
 * Brings a fleet database up to the schema this build expects, running only the migrations it
 * has not run; returns the ids and names it ran (empty when already current).
 */
export const migrateFleet: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient
> = Migrator.make({})({
  loader: Migrator.fromRecord(fleetMigrations),
  table: FLEET_MIGRATIONS_TABLE
})
