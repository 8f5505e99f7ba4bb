/**
 * `logbook sessions`: the sessions of the store, most recently updated first, with their status,
 * counters and whether a live process holds them. Read-only.
 */
import type { SessionSummary } from "@logbook/projections"
import { recentSessions } from "@logbook/projections"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { jsonFlag } from "../Flags.ts"
import { note, printAll, printJson, printLines, table } from "../Output.ts"
import { Invocation, location } from "../Root.ts"

/** One session of `sessions --json`. */
export const sessionJson = (s: SessionSummary) => ({
  session_id: s.id,
  status: s.status,
  turn_count: s.turnCount,
  event_count: s.eventCount,
  updated_at: s.updatedAt,
  live: s.live
})

/**
 * The `sessions` table lines; `extra` adds columns after the standard ones (the fleet's origin
 * host), one header and one cell per session each.
 */
export const sessionsTable = <S extends SessionSummary>(
  sessions: ReadonlyArray<S>,
  extra: ReadonlyArray<{ readonly header: string; readonly cell: (s: S) => string }> = []
): Array<string> =>
  table(
    ["SESSION", "STATUS", "TURNS", "EVENTS", "UPDATED", "LOCK", "PIN", ...extra.map((e) => e.header)],
    sessions.map((s) => [
      s.id,
      s.inTurn ? `${s.status}*` : s.status,
      String(s.turnCount),
      String(s.eventCount),
      s.updatedAt,
      s.lockIsLink ? "link" : s.live ? "held" : "free",
      s.pinIsLink ? "link" : s.pinned ? "pinned" : "-",
      ...extra.map((e) => e.cell(s))
    ]),
    [2, 3]
  )

/** Ids a note names: at most ten, then how many more (a store of thousands never floods stderr). */
export const idList = (ids: ReadonlyArray<string>, most = 10): string =>
  ids.length <= most ? ids.join(", ") : `${ids.slice(0, most).join(", ")} and ${ids.length - most} more`

/** `sessions [--limit N] [--json]`. */
export const sessionsCommand = Command.make(
  "sessions",
  {
    limit: Flag.Int("limit").pipe(
      Flag.filter((n) => n >= 1, (n) => `--limit must be at least 1, got ${n}`),
      Flag.withDescription("Show at most N sessions (the most recently updated)"),
      Flag.optional
    ),
    json: jsonFlag
  },
  Effect.fn("cli.sessions")(function*({ json, limit }) {
    const where = yield* location
    const listing = yield* recentSessions(where.sessionsDir, { limit: Option.getOrUndefined(limit), saveCatalog: true })
    if (json) {
      yield* printJson(listing.sessions.map(sessionJson))
    } else if (listing.sessions.length === 0) {
      const cli = yield* Invocation
      yield* printLines(`No sessions in ${listing.sessionsDir}. Record one with \`${cli} demo\`.`)
    } else {
      yield* printAll(sessionsTable(listing.sessions))
    }
    if (listing.unreadable.length > 0) {
      yield* note(
        `note: skipped ${listing.unreadable.length} director${
          listing.unreadable.length === 1 ? "y" : "ies"
        } without a readable manifest.json (${idList(listing.unreadable)}); inspect with \`logbook verify <id>\``
      )
    }
  })
).pipe(
  Command.withShortDescription("List sessions, most recently updated first"),
  Command.withDescription(
    "List the sessions of the store, most recently updated first: id, status (* = a turn is open), turns, " +
      "events, last update, lock (held = open in a live process, link = session.lock is a symbolic link) and pin (link = a symbolic link, which pins too). Read-only."
  ),
  Command.withExamples([
    { command: "logbook sessions --limit 10", description: "The ten most recently updated sessions" },
    { command: "logbook sessions --json", description: "Every session as a JSON array, for scripts" }
  ])
)
