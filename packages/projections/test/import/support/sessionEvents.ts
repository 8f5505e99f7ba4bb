/**
 * Reading back what an import wrote, for the importer tests: every event of a session's
 * `events.jsonl` (each line decoded as the store decodes it; a line that does not decode fails
 * the test), the completed items among them, and the bytes of every session's log and manifest.
 */
import type { ThreadEvent } from "@logbook/domain"
import { decodeLineText } from "@logbook/domain"
import { sessionPaths } from "@logbook/store"
import { Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

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

/**
 * The bytes (base64) of every session's `events.jsonl` and `manifest.json` below `sessionsDir`,
 * keyed `<session>/<file>`: what "re-import is byte-identical" compares.
 */
export const logBytes = (sessionsDir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of fs.readdirSync(sessionsDir).sort()) {
    for (const file of ["events.jsonl", "manifest.json"]) {
      out[`${name}/${file}`] = fs.readFileSync(path.join(sessionsDir, name, file), "base64")
    }
  }
  return out
}
