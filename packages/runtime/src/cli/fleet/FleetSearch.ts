/**
 * `logbook fleet search <query>`: ranked search over every session replicated into the fleet
 * (docs/fleet.md#search), with the same ranking and output as the local `logbook search`. The
 * connection string comes from `--db` or `LOGBOOK_DATABASE_URL` and is never printed.
 *
 * **Gotchas:** this module only declares the command; its handler lives in `FleetSearchRun.ts`,
 * imported when the command runs, so the PostgreSQL driver is never loaded by other commands.
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { fleetDbFlag, jsonFlag, minScoreFlag, nowFlag, searchLimitFlag, searchQueryArgument } from "../Flags.ts"

/** The handler, loaded on first use. */
const run = Effect.promise(() => import("./FleetSearchRun.ts"))

/** `fleet search <query> [--scope facts|history|all] [--limit N] [--min-score S] [--now T] [--json]`. */
export const fleetSearchCommand = Command.make(
  "search",
  {
    query: searchQueryArgument,
    db: fleetDbFlag,
    scope: Flag.Literals("scope", ["facts", "history", "all"]).pipe(
      Flag.withAlias("in"),
      Flag.withDescription(
        "facts: the memory views' grounded facts; history: every retained turn; all: both, merged by score " +
          "(also --in)"
      ),
      Flag.withDefault("facts")
    ),
    limit: searchLimitFlag,
    minScore: minScoreFlag,
    now: nowFlag,
    json: jsonFlag
  },
  Effect.fn("cli.fleet.search.run")(function*(args) {
    return yield* (yield* run).fleetSearch(args)
  })
).pipe(
  Command.withShortDescription("Rank the facts or turns of every session in the fleet, as `logbook search` does"),
  Command.withDescription(
    "Rank the grounded facts (--scope facts, the default), retained turns (--scope history) or both (--scope all) " +
      "of every session replicated into the fleet, by the same BM25 (k1 1.2, b 0.75) and recency rules as " +
      "`logbook search`, with the same output. Sessions are indexed by `logbook replicate`. Read-only."
  ),
  Command.withExamples([
    {
      command: "logbook fleet search \"flaky websocket test\" --db postgres://logbook@db:5432/fleet",
      description: "The best-matching facts across every machine's sessions"
    },
    {
      command: "LOGBOOK_DATABASE_URL=postgres://… logbook fleet search ECONNREFUSED --scope history --json",
      description: "The best-matching turns, as JSON"
    }
  ])
)
