/**
 * Support shared by the CLI tests that talk to the test fleet: a connection of the test's own for
 * set-up (closed when it ends: the CLI under test needs its own), and the in-process CLI retried
 * while the embedded server is still releasing the previous client's connection.
 */
import { layerFleetClient } from "@logbook/fleet"
import type { CliRun } from "@logbook/testkit"
import { busyServerRetry, fleetTestTarget } from "@logbook/testkit"
import { Effect, Layer, Redacted } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { InProcessOptions } from "../../inProcess.ts"
import { logbook } from "../../inProcess.ts"

/** Runs `effect` with its own connection to the test database, closed when it ends. */
export const withDb = <A, E>(effect: Effect.Effect<A, E, SqlClient>) =>
  Effect.flatMap(
    fleetTestTarget,
    (target) =>
      Effect.provide(effect, Layer.orDie(layerFleetClient(target, { maxConnections: 1 }))).pipe(
        Effect.retry(busyServerRetry)
      )
  )

/** Runs the CLI in process, again when the embedded server refused its connection. */
export const runFleetCli = (args: ReadonlyArray<string>, options: InProcessOptions = {}): Effect.Effect<CliRun> =>
  logbook(args, options).pipe(
    Effect.flatMap((r) =>
      /PgConnection: (Failed to connect|Connection closed during startup)/.test(r.stderr)
        ? Effect.fail(r)
        : Effect.succeed(r)
    ),
    Effect.retry(busyServerRetry),
    Effect.catch((r: CliRun) => Effect.succeed(r))
  )

/** The test database's connection string, as a user passes it to `--db`. */
export const testDbUrl = Effect.map(fleetTestTarget, (target) => Redacted.value(target.url))
