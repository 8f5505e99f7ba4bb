/**
 * Reading back what an import wrote, for the importer tests: every event of a session's
 * `events.jsonl` (each line decoded as the store decodes it; a line that does not decode fails
 * the test), and the completed items among them.
 */
import type { ThreadEvent } from "@logbook/domain"
import { decodeLineText } from "@logbook/domain"
import { sessionPaths } from "@logbook/store"
import { Result } from "effect"
import * as fs from "node:fs"

/** Every event of `session`'s log, in order. */
export const eventsOf = (sessionsDir: string, session: string): Array<ThreadEvent> =>
  fs.readFileSync(sessionPaths(sessionsDir, session).events, "utf8").split("\n").filter((l) => l.length > 0).map(
    (line) => {
      const decoded = decodeLineText(line)
      if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
      return decoded.success.event
    }
  )

/** The items of the `item.completed` events. */
export const items = (events: ReadonlyArray<ThreadEvent>) =>
  events.flatMap((e) => e.type === "item.completed" ? [e.item] : [])
