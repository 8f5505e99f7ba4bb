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

/** A deterministic source for tests: distinct UUID-shaped (v4 layout) ids from a counter. */
export const sequentialIds = (seed = 0): IdSource => {
  let n = seed
  return {
    uuid: () => {
      n++
      // 30 counter digits around the fixed version (4) and variant (8) nibbles: injective.
      const hex = n.toString(16).padStart(30, "0")
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(12, 15)}-8${hex.slice(15, 18)}-${hex.slice(18, 30)}`
    }
  }
}
