/**
 * How an OpenCode message is fingerprinted for the incremental digest of a whole-session import
 * (docs/import.md#opencode): by its id and its parts' ids, not its JSON. OpenCode updates finished
 * messages in place — a user message's `summary.diffs` are filled in after its turn, old tool
 * outputs are marked compacted — so the JSON of a message imported before may differ at the next
 * read of the same, grown session, from its store or from a new `opencode export`.
 *
 * **Gotchas**: a message without an id (a hand-made export) falls back to its JSON text, so a
 * changed prefix is still refused there.
 */
import { Predicate } from "effect"

const idOf = (value: unknown): string | undefined =>
  Predicate.isReadonlyObject(value) && typeof value["id"] === "string" ? value["id"] : undefined

/**
 * A message's ids (`info.id` and its parts' `id`) as the digest's text; a message deleted or
 * replaced (a revert) changes them and is refused like a changed prefix.
 */
export const openCodeMessageDigest = (message: unknown): string => {
  if (!Predicate.isReadonlyObject(message)) return ""
  const parts = message["parts"]
  const partIds = Array.isArray(parts) ? parts.map((p: unknown) => idOf(p) ?? "") : []
  return JSON.stringify([idOf(message["info"]) ?? "", partIds])
}

/**
 * The digest of a message of an `opencode export` document: its ids when it has them (as every
 * export OpenCode writes), else its JSON text.
 */
export const openCodeExportDigest = (message: unknown): string =>
  Predicate.isReadonlyObject(message) && idOf(message["info"]) !== undefined
    ? openCodeMessageDigest(message)
    : JSON.stringify(message)
