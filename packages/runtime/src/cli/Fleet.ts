/**
 * `logbook fleet …`: the fleet (docs/fleet.md), session stores of many machines replicated into
 * PostgreSQL. The connection string comes from `--db` or `LOGBOOK_DATABASE_URL` and is never
 * printed.
 *
 * **Gotchas:** subcommands only declare themselves here; their handlers are imported when a
 * fleet command runs, so the PostgreSQL driver is never loaded by the local commands.
 */
import { Command } from "effect/cli"
import { fleetSearchCommand } from "./FleetSearch.ts"

/** `fleet` with its subcommands. */
export const fleetCommand = Command.make("fleet").pipe(
  Command.withShortDescription("Query the fleet: sessions replicated from many machines into PostgreSQL"),
  Command.withDescription(
    "Query the fleet, where `logbook replicate` gathers the session stores of many machines. The connection " +
      "string comes from --db or LOGBOOK_DATABASE_URL and is never printed."
  ),
  Command.withSubcommands([fleetSearchCommand])
)
