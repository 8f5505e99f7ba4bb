/**
 * Random identifiers for the store and runtime (verifier ids, matrix attempt and worker
 * ids) behind a replaceable reference, so tests can make them deterministic.
 */
import { Context } from "effect"
import { randomUUID } from "node:crypto"

/** The id source: `uuid()` returns a fresh RFC 4122 v4 UUID string (lowercase, hyphenated). */
export interface IdSource {
  readonly uuid: () => string
}

/** A service with a default: `crypto.randomUUID`. Tests provide a seeded source instead. */
export const IdGenerator = Context.Reference<IdSource>("@logbook/store/IdGenerator", {
  defaultValue: () => ({ uuid: () => randomUUID() })
})

/** A deterministic source for tests: UUID-shaped ids from a counter and a prefix byte. */
export const sequentialIds = (seed = 0): IdSource => {
  let n = seed
  return {
    uuid: () => {
      n++
      const hex = n.toString(16).padStart(32, "0")
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
    }
  }
}
