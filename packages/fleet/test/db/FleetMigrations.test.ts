/**
 * The fleet schema: migrations run once on an empty database, a second run changes nothing, and
 * the tables the replicator and fleet queries rely on exist with their keys.
 */
import { assert, describe, it } from "@effect/vitest"
import { FLEET_MIGRATIONS_TABLE, migrateFleet } from "@logbook/fleet"
import { layerFreshFleet } from "@logbook/testkit"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

describe("FleetMigrations", () => {
  it.layer(layerFreshFleet)((it) => {
    it.effect("a second migration run on a current database runs nothing", () =>
      Effect.gen(function*() {
        const ran = yield* migrateFleet
        assert.deepStrictEqual(ran, [])
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ readonly id: number }>`select migration_id as id from ${sql(FLEET_MIGRATIONS_TABLE)}`
        assert.isAtLeast(rows.length, 1)
      }))

    it.effect("the base tables exist and an event is keyed by session, epoch and byte offset", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`insert into sessions (session_id, origin_host) values ('s1', 'host-a')`
        yield* sql`insert into session_epochs (session_id, epoch) values ('s1', 0)`
        const row = {
          session_id: "s1",
          epoch: 0,
          byte_offset: 0,
          length: 2,
          sha256: "00",
          line: new TextEncoder().encode("{}")
        }
        yield* sql`insert into events ${sql.insert(row)}`
        const duplicate = yield* sql`insert into events ${sql.insert(row)}`.pipe(Effect.flip)
        assert.strictEqual(duplicate._tag, "SqlError")
        const lines = yield* sql<{ readonly line: Uint8Array }>`select line from events where session_id = 's1'`
        assert.strictEqual(lines.length, 1)
        assert.strictEqual(new TextDecoder().decode(lines[0]?.line), "{}")
      }))
  })
})
