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
  Argument.withDescription("Session id (or its directory name, as `logbook sessions` lists it)")
)
