/**
 * The fleet database connection: where the PostgreSQL connection string comes from (a flag or
 * `LOGBOOK_DATABASE_URL`), how it is kept secret (a `Redacted` value end to end; anything printed
 * about a connection names only host, port and database), and the client Layer the replicator
 * and fleet queries run on. The client is `@effect/sql-pg`'s own wire client; TLS options pass
 * through as given.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { Config, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { isSqlError } from "effect/sql/SqlError"
import type { ConnectionOptions } from "node:tls"

/** The environment variable that holds the fleet's connection string when no flag gives one. */
export const FLEET_DATABASE_URL_ENV = "LOGBOOK_DATABASE_URL"

/**
 * A fleet operation failed: the database refused, the connection dropped or could not be made,
 * or what the fleet holds contradicts what was asked. `target` is the redacted connection
 * (`host:port/database`, never the password or the full URL).
 */
export class FleetError extends Schema.TaggedError<FleetError>()("FleetError", {
  operation: Schema.String,
  target: Schema.String,
  message: Schema.String
}) {}

/** No connection string was given: neither the flag nor `LOGBOOK_DATABASE_URL`. */
export class FleetDatabaseMissing extends Schema.TaggedError<FleetDatabaseMissing>()("FleetDatabaseMissing", {
  operation: Schema.String
}) {}

/** The connection string is not a `postgres://` or `postgresql://` URL. */
export class InvalidFleetDatabaseUrl extends Schema.TaggedError<InvalidFleetDatabaseUrl>()("InvalidFleetDatabaseUrl", {
  operation: Schema.String,
  reason: Schema.String
}) {}

/** Where a fleet lives: the secret URL and the redacted form that errors and progress may print. */
export interface FleetTarget {
  readonly url: Redacted.Redacted<string>
  /** `host:port/database`, safe to print. */
  readonly display: string
}

const defaultPort = "5432"

/** `decodeURIComponent`, or `undefined` for text that is not valid percent-encoding (never throws). */
const percentDecoded = (text: string): string | undefined => {
  const decoded = Result.try(() => decodeURIComponent(text))
  return Result.isSuccess(decoded) ? decoded.success : undefined
}

/**
 * Validates a connection string and returns it as a secret with its printable form. The reason
 * of a rejection never repeats the string itself, which may hold a password.
 */
export const parseFleetUrl = (
  operation: string,
  text: string
): Effect.Effect<FleetTarget, InvalidFleetDatabaseUrl> => {
  const parsed = URL.parse(text)
  if (parsed === null) {
    return Effect.fail(new InvalidFleetDatabaseUrl({ operation, reason: "it is not a URL" }))
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    return Effect.fail(
      new InvalidFleetDatabaseUrl({
        operation,
        reason: `the scheme is ${JSON.stringify(parsed.protocol)}; use postgres://user@host:port/database`
      })
    )
  }
  if (parsed.hostname === "") {
    return Effect.fail(new InvalidFleetDatabaseUrl({ operation, reason: "it names no host" }))
  }
  // The driver percent-decodes these and would throw on a bad escape (say `%zz` in a password).
  for (const [part, value] of [["user name", parsed.username], ["password", parsed.password]] as const) {
    if (percentDecoded(value) === undefined) {
      return Effect.fail(
        new InvalidFleetDatabaseUrl({
          operation,
          reason: `the ${part} is not valid percent-encoding (write % as %25)`
        })
      )
    }
  }
  const databaseName = percentDecoded(parsed.pathname.replace(/^\//, ""))
  if (databaseName === undefined) {
    return Effect.fail(
      new InvalidFleetDatabaseUrl({
        operation,
        reason: "the database name is not valid percent-encoding (write % as %25)"
      })
    )
  }
  const database = databaseName || "postgres"
  const display = `${parsed.hostname}:${parsed.port || defaultPort}/${database}`
  return Effect.succeed({ url: Redacted.make(text), display })
}

/**
 * Resolves the fleet target from a flag value, falling back to `LOGBOOK_DATABASE_URL`.
 * **Gotchas:** the environment is read here, at the edge; library code takes a `FleetTarget`.
 */
export const resolveFleetTarget = (
  operation: string,
  flag: Option.Option<string>,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<FleetTarget, FleetDatabaseMissing | InvalidFleetDatabaseUrl> => {
  const text = Option.getOrElse(flag, () => env[FLEET_DATABASE_URL_ENV] ?? "")
  if (text === "") {
    return Effect.fail(new FleetDatabaseMissing({ operation }))
  }
  return parseFleetUrl(operation, text)
}

/**
 * The fleet target of one invocation: the connection string given (a `--db` flag), else
 * `LOGBOOK_DATABASE_URL`. This is the one place the environment is read, through
 * `Config.Redacted`, so the URL stays redacted until it is parsed into a `FleetTarget`.
 */
export const fleetTargetFromConfig = (
  operation: string,
  given: Option.Option<Redacted.Redacted<string>>
): Effect.Effect<FleetTarget, FleetDatabaseMissing | InvalidFleetDatabaseUrl> =>
  Effect.gen(function*() {
    const env = yield* Config.option(Config.Redacted(FLEET_DATABASE_URL_ENV)).pipe(
      Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>())
    )
    const url = Option.orElse(given, () => env)
    return yield* resolveFleetTarget(operation, Option.map(url, Redacted.value), {})
  })

/** Connection settings beyond the URL: TLS as Node's `tls.connect` takes it, and the pool size. */
export interface FleetClientOptions {
  readonly ssl?: boolean | ConnectionOptions | undefined
  readonly maxConnections?: number | undefined
}

/**
 * The PostgreSQL client Layer for a fleet target (provides `PgClient` and `SqlClient`). A failed
 * connection becomes a `FleetError` naming only the redacted target.
 */
export const layerFleetClient = (
  target: FleetTarget,
  options: FleetClientOptions = {}
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, FleetError> =>
  PgClient.layerFrom(
    PgClient.make({
      url: target.url,
      ssl: options.ssl,
      maxConnections: options.maxConnections ?? 4,
      applicationName: "logbook"
    }).pipe(Effect.mapError(toFleetError(target, "connect")))
  )

/**
 * The message of a database failure with any trace of the connection string removed: drivers
 * sometimes echo the URL they were given, and it may carry a password.
 */
export const fleetErrorMessage = (target: FleetTarget, error: unknown): string => {
  const raw = error instanceof Error ? error.message : String(error)
  const url = Redacted.value(target.url)
  const scrubbed = raw.split(url).join(target.display)
  const parsed = URL.parse(url)
  const password = parsed === null ? undefined : percentDecoded(parsed.password)
  return password !== undefined && password !== "" ? scrubbed.split(password).join("***") : scrubbed
}

/** Maps a SQL failure of `operation` to a `FleetError` against `target`. */
export const toFleetError = (target: FleetTarget, operation: string) => (error: SqlError | Error): FleetError =>
  new FleetError({ operation, target: target.display, message: fleetErrorMessage(target, error) })

/**
 * A connection that closes in the middle of a query can surface from the driver as a defect
 * carrying a `SqlError`; it is an ordinary, retryable failure (the transaction rolled back).
 */
export const sqlDefectsAsFailures = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
  Effect.catchDefect(effect, (defect) => isSqlError(defect) ? Effect.fail(defect) : Effect.die(defect))
