/**
 * What `logbook fleet search` does once parsed: connect to the fleet named by `--db` or
 * `LOGBOOK_DATABASE_URL` (never printed), rank with `searchFleet`, and print exactly what the
 * local `logbook search` prints. Loaded by `FleetSearch.ts` only when the command runs, so the
 * PostgreSQL driver costs nothing to the local commands.
 */
import { distinctTokens, tokenize } from "@logbook/domain"
import type { FleetSearchScope } from "@logbook/fleet"
import { FLEET_DATABASE_URL_ENV, layerFleetClient, resolveFleetTarget, searchFleet, toFleetError } from "@logbook/fleet"
import { Config, Effect, Option, Stdio } from "effect"
import { resultLine } from "../memory/Memory.ts"
import { printAll, printJson, printLines } from "../Output.ts"

/** The parsed flags of `fleet search`. */
export interface FleetSearchArgs {
  readonly query: string
  readonly db: Option.Option<string>
  readonly scope: FleetSearchScope
  readonly limit: number
  readonly minScore: number
  readonly now: Option.Option<number>
  readonly json: boolean
}

/** `fleet search <query>`: the ranked results, as JSON or one line each. */
export const fleetSearch = Effect.fn("cli.fleet.search")(function*(args: FleetSearchArgs) {
  const env = yield* Config.option(Config.String(FLEET_DATABASE_URL_ENV)).pipe(
    Effect.orElseSucceed(() => Option.none<string>())
  )
  const target = yield* resolveFleetTarget("fleet.search", args.db, {
    [FLEET_DATABASE_URL_ENV]: Option.getOrUndefined(env)
  })
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
  yield* printAll(results.map((r) => resultLine(r, terms)))
})
