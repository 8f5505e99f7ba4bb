/**
 * Flags several `logbook` commands share.
 */
import { Argument, Flag } from "effect/cli"

/** `--json`: machine-readable output instead of text. */
export const jsonFlag = Flag.Boolean("json").pipe(
  Flag.withDescription("Print machine-readable JSON instead of text"),
  Flag.withDefault(false)
)

/** The `<session>` argument: a session id or its directory name as `logbook sessions` lists it. */
export const sessionArgument = Argument.String("session").pipe(
  Argument.filter((id) => id.length > 0, () => "the session id is empty"),
  Argument.withDescription("Session id (or its directory name, as `logbook sessions` lists it)")
)

/** The `<query>` argument of the search commands. */
export const searchQueryArgument = Argument.String("query").pipe(
  Argument.withDescription("Words to look for (case-insensitive)")
)

/** `--limit N` of the search commands (`--max` is its older spelling): at most N results, default 6. */
export const searchLimitFlag = Flag.Int("limit").pipe(
  Flag.withAlias("max"),
  Flag.filter((n) => n >= 1, (n) => `--limit must be at least 1, got ${n}`),
  Flag.withDescription("At most N results (default 6; also --max)"),
  Flag.withDefault(6)
)

/** `--min-score S` of the search commands: results scoring below S are dropped (default 0). */
export const minScoreFlag = Flag.Finite("min-score").pipe(
  Flag.withDescription("Drop results scoring below S (after the recency multiplier; default 0)"),
  Flag.withDefault(0)
)

/** `--now T` of the search commands: rank as if it were this Unix time in seconds. */
export const nowFlag = Flag.Int("now").pipe(
  Flag.withDescription("Rank as if it were this Unix time in seconds (recency multiplier)"),
  Flag.optional
)

/** `--db`: the fleet's connection string (else `LOGBOOK_DATABASE_URL`). */
export const fleetDbFlag = Flag.Redacted("db").pipe(
  Flag.withDescription(
    "The fleet's PostgreSQL connection string, postgres://user@host:port/database " +
      "(default: LOGBOOK_DATABASE_URL); never printed"
  ),
  Flag.optional
)

/**
 * `--db` and `--fleet` of a reader that serves a store by default (`mcp`, `serve`): either one
 * switches it to a fleet, `--db` naming it, `--fleet` taking it from `LOGBOOK_DATABASE_URL` (so a
 * set variable alone never switches a local reader to a database).
 */
export const fleetSourceFlags = {
  db: Flag.Redacted("db").pipe(
    Flag.withDescription(
      "Serve a fleet instead of the sessions root: its PostgreSQL connection string, " +
        "postgres://user@host:port/database; never printed (see --fleet to take it from LOGBOOK_DATABASE_URL)"
    ),
    Flag.optional
  ),
  fleet: Flag.Boolean("fleet").pipe(
    Flag.withDescription("Serve the fleet named by LOGBOOK_DATABASE_URL (as --db would) instead of the sessions root"),
    Flag.withDefault(false)
  )
}
