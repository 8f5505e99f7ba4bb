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
