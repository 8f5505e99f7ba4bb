/**
 * A fleet database for tests: the server the `fleet` Vitest project's global setup provides
 * (`LOGBOOK_TEST_DATABASE_URL`: an embedded PGlite by default, a real PostgreSQL in the
 * real-server lane), emptied and migrated afresh for each test file that asks.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import type { FleetTarget } from "@logbook/fleet"
import { layerFleetClient, migrateFleet, parseFleetUrl } from "@logbook/fleet"
import { Effect, Layer, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

/** The variable the fleet project's global setup sets to the test server's URL. */
export const TEST_DATABASE_URL_ENV = "LOGBOOK_TEST_DATABASE_URL"

/** True when the test server is the embedded PGlite (one connection at a time). */
export const testDatabaseIsEmbedded = (): boolean => process.env["LOGBOOK_TEST_DATABASE_KIND"] === "pglite"

/** The test server as a fleet target; dies with a how-to when the test runs outside the fleet project. */
export const fleetTestTarget: Effect.Effect<FleetTarget> = Effect.suspend(() => {
  const url = process.env[TEST_DATABASE_URL_ENV] ?? ""
  return url === ""
    ? Effect.die(
      new Error(
        `${TEST_DATABASE_URL_ENV} is not set: run fleet tests through Vitest's "fleet" project ` +
          "(npx vitest run --project fleet), whose global setup starts a database"
      )
    )
    : parseFleetUrl("test", url).pipe(Effect.orDie)
})

/** Drops everything in the test database's `public` schema and runs every fleet migration. */
export const resetFleetDatabase: Effect.Effect<void, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`drop schema if exists public cascade`
  yield* sql`create schema public`
  yield* migrateFleet
}).pipe(Effect.orDie)

/**
 * A client of the test database, emptied and migrated when the layer is built: provide it once
 * per test file (`it.layer`). One connection, as the embedded server admits.
 */
export const layerFreshFleet: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient> = Layer.unwrap(
  Effect.map(fleetTestTarget, (target) => layerFleetClient(target, { maxConnections: 1 }))
).pipe(
  Layer.orDie,
  (client) => Layer.effectDiscard(resetFleetDatabase).pipe(Layer.provideMerge(client))
)

/**
 * How a fleet test retries a connection the embedded server refused: it admits one connection and
 * notices a closed one only a moment later, which on a loaded machine can take seconds. Up to 30 s
 * of 200 ms waits, so a busy laptop still passes; a real server never needs it.
 */
export const busyServerRetry = { schedule: Schedule.spaced("200 millis"), times: 150 }
