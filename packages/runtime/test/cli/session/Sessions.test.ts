/**
 * `logbook sessions` notes: the skipped-directory note names at most ten ids and counts the rest,
 * so a store of thousands of unreadable directories prints one short line.
 */
import { assert, describe, it } from "@effect/vitest"
import { idList } from "../../../src/cli/session/Sessions.ts"

describe("sessions notes", () => {
  it("lists up to ten ids whole and cuts a longer list to ten and the count of the rest", () => {
    const ids = Array.from({ length: 5_000 }, (_, i) => `s${i}`)
    assert.strictEqual(idList(ids.slice(0, 3)), "s0, s1, s2")
    assert.strictEqual(idList(ids.slice(0, 10)), ids.slice(0, 10).join(", "))
    assert.strictEqual(idList(ids.slice(0, 11)), `${ids.slice(0, 10).join(", ")} and 1 more`)
    assert.strictEqual(idList(ids), `${ids.slice(0, 10).join(", ")} and 4990 more`)
  })
})
