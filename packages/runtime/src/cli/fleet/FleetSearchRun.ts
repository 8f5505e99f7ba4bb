/**
 * What `logbook fleet search` does once parsed: connect to the fleet named by `--db` or
 * `LOGBOOK_DATABASE_URL` (never printed), rank with `searchFleet`, and print exactly what the
 * local `logbook search` prints. Loaded by `FleetSearch.ts` only when the command runs, so the
 * PostgreSQL driver costs nothing to the local commands.
 */
import { distinctTokens, tokenize } from "@logbook/domain"
import type { FleetSearchScope } from "@logbook/fleet"
import { fleetTargetFromConfig, layerFleetClient, searchFleet, toFleetError } from "@logbook/fleet"
import { Effect, Option, Stdio } from "effect"
import type { Redacted } from "effect"
import { printResultLines } from "../memory/Memory.ts"
import { printJson, printLines } from "../Output.ts"

/** The parsed flags of `fleet search`. */
export interface FleetSearchArgs {
  readonly query: string
  readonly db: Option.Option<Redacted.Redacted<string>>
  readonly scope: FleetSearchScope
  readonly limit: number
  readonly minScore: number
  readonly now: Option.Option<number>
  readonly json: boolean
}

/** `fleet search <query>`: the ranked results, as JSON or one line each. */
export const fleetSearch = Effect.fn("cli.fleet.search")(function*(args: FleetSearchArgs) {
  const target = yield* fleetTargetFromConfig("fleet.search", args.db)
  const results = yield* searchFleet(args.query, {
    scope: args.scope,
    maxResults: args.limit,
    minScore: args.minScore,
    now: Option.getOrUndefined(args.now)
  }).pipe(
    Effect.mapError(toFleetError(target, "search")),
    Effect.provide(layerFleetClient(target, { maxConnections: 1 }))
  )
  if (args.json) return yield* printJson(results)
  if (results.length === 0) {
    const what = args.scope === "all" ? "facts or turns" : args.scope
    return yield* printLines(
      tokenize(args.query).length === 0
        ? "No words to search for in the query."
        : `No ${what} in the fleet ${target.display} match "${args.query}".`
    )
  }
  const stdio = yield* Stdio.Stdio
  const terms = (yield* stdio.stdoutIsTerminal) ? new Set(distinctTokens(args.query)) : undefined
  yield* printResultLines(results, terms)
})
