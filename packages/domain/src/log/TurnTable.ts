/**
 * The turn index read column by column: a `TurnTable` answers "how many turns, and what are the
 * span, event count and start time of entry i" without one object per turn. A table is either a
 * view over decoded entries ({@link turnTableOf}) or over a packed representation (the store's
 * binary sidecar of `index/turns.json`), so readers of a session with hundreds of thousands of
 * turns — `show`, `turn`, `verify` — hold a few bytes per turn instead of a parsed JSON document.
 * The checks and the lookup below are the table forms of `TurnIndex`'s, with the same meaning.
 */
import type { Manifest, TurnEntry } from "./SessionFiles.ts"
import type { TurnLocation } from "./TurnIndex.ts"

/** A turn index, entry `i` read field by field (`0 ≤ i < length`, oldest first). */
export interface TurnTable {
  readonly length: number
  readonly turnAt: (i: number) => number
  readonly startAt: (i: number) => number
  readonly endAt: (i: number) => number
  readonly eventCountAt: (i: number) => number
  readonly tsAt: (i: number) => string
}

/** A table viewing `entries` (no copy). */
export const turnTableOf = (entries: ReadonlyArray<TurnEntry>): TurnTable => {
  const at = (i: number): TurnEntry => {
    const e = entries[i]
    if (e === undefined) throw new RangeError(`turn table index ${i} out of range 0..${entries.length}`)
    return e
  }
  return {
    length: entries.length,
    turnAt: (i) => at(i).turn_number,
    startAt: (i) => at(i).start_offset,
    endAt: (i) => at(i).end_offset,
    eventCountAt: (i) => at(i).event_count,
    tsAt: (i) => at(i).ts
  }
}

/** Entry `i` as an object. */
export const entryAt = (table: TurnTable, i: number): TurnEntry => ({
  turn_number: table.turnAt(i),
  start_offset: table.startAt(i),
  end_offset: table.endAt(i),
  event_count: table.eventCountAt(i),
  ts: table.tsAt(i)
})

/** Every entry as an object (O(n) objects: for output that prints them all). */
export const entriesOf = (table: TurnTable): Array<TurnEntry> => {
  const out: Array<TurnEntry> = new Array(table.length)
  for (let i = 0; i < table.length; i++) out[i] = entryAt(table, i)
  return out
}

/** The table form of `isIndexValid`: the same rules, entry by entry. */
export const isTableValid = (table: TurnTable, fileLen: number): boolean => {
  let previousEnd = 0
  for (let i = 0; i < table.length; i++) {
    const start = table.startAt(i)
    const end = table.endAt(i)
    if (table.eventCountAt(i) <= 0) return false
    if (start < previousEnd) return false
    if (start > end) return false
    if (end > fileLen) return false
    previousEnd = end
  }
  return true
}

/** The table form of `isIndexConsistent`: the same rules, entry by entry. */
export const isTableConsistent = (table: TurnTable, manifest: Manifest): boolean => {
  const inTurn = manifest.in_turn === true
  const expectedLast = manifest.turn_count + (inTurn ? 1 : 0)
  const expectedFirst = Math.max(manifest.retained_turn_base ?? 1, 1)
  if (table.length === 0) {
    if (inTurn) return false
    return expectedLast === 0 || expectedFirst > manifest.turn_count
  }
  if (table.turnAt(0) !== expectedFirst || table.turnAt(table.length - 1) !== expectedLast) return false
  let previous = table.turnAt(0) - 1
  for (let i = 0; i < table.length; i++) {
    const turn = table.turnAt(i)
    if (turn !== previous + 1) return false
    previous = turn
  }
  return true
}

/** The table form of `locateTurn`: where turn `turn` is among the retained entries. */
export const locateTurnIn = (table: TurnTable, retainedTurnBase: number, turn: number): TurnLocation => {
  const base = Math.max(retainedTurnBase, 1)
  const first = table.length > 0 ? table.turnAt(0) : base
  const guess = turn - first
  let found = -1
  if (Number.isInteger(guess) && guess >= 0 && guess < table.length && table.turnAt(guess) === turn) {
    found = guess
  } else {
    for (let i = 0; i < table.length; i++) {
      if (table.turnAt(i) === turn) {
        found = i
        break
      }
    }
  }
  if (found >= 0) return { _tag: "Found", entry: entryAt(table, found) }
  if (Number.isInteger(turn) && turn >= 1 && turn < base) return { _tag: "Evicted", retainedTurnBase: base }
  return { _tag: "NeverExisted" }
}
