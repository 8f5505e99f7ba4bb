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

/** Entries as a table: an array is viewed (no copy), a table is taken as it is. */
export const asTurnTable = (entries: ReadonlyArray<TurnEntry> | TurnTable): TurnTable =>
  "turnAt" in entries ? entries : turnTableOf(entries)

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

/** Entries per block of a {@link TurnColumns}: growing never copies more than one block. */
const BLOCK = 4096
// Entries of a new block before it first grows.
const FIRST_BLOCK = 64
/** Numbers kept per entry: turn number, start, end, event count, the timestamp's epoch ms. */
const FIELDS = 5
/** How an entry's `ts` is kept: rebuilt from its epoch ms in either of the two RFC 3339 forms the store writes, or kept as text. */
const TS_ZULU = 0
const TS_UTC_OFFSET = 1
const TS_TEXT = 2

/** Epoch ms of `ts` and its form when `ts` is exactly what `toISOString` (or its `+00:00` variant) prints for them. */
const packTimestamp = (ts: string): { readonly ms: number; readonly form: number } | undefined => {
  const zulu = ts.length === 24 && ts.charCodeAt(23) === 90
  const offset = !zulu && ts.length === 29 && ts.endsWith("+00:00")
  if (!zulu && !offset) return undefined
  const iso = zulu ? ts : `${ts.slice(0, 23)}Z`
  const ms = Date.parse(iso)
  if (!Number.isFinite(ms) || new Date(ms).toISOString() !== iso) return undefined
  return { ms, form: zulu ? TS_ZULU : TS_UTC_OFFSET }
}

/**
 * A growable turn index kept column by column: the writer's and the rescan's closed entries, so a
 * log of hundreds of thousands of small turns costs about 41 bytes per turn (five numbers, a form
 * byte) instead of an object and a timestamp string each (item 8 of the reliability review: a
 * 1 GB log of 320 000 turns). Entries are appended at the end only; a timestamp in one of the
 * store's two RFC 3339 forms is kept as its epoch ms and printed back byte for byte, any other
 * text is kept as it is.
 *
 * **Gotchas**: mutable and owned by one fold or one session state; a reader that must not see
 * later appends takes {@link TurnColumns.slice}. Views over it ({@link withOpenEntry}) read the
 * current length.
 */
export class TurnColumns implements TurnTable {
  private readonly numbers: Array<Float64Array> = []
  private readonly forms: Array<Uint8Array> = []
  private texts: Map<number, string> | undefined
  private size = 0

  /** Columns holding `table`'s entries `from..to` (all of them by default), in order. */
  static of(table: TurnTable, from = 0, to = table.length): TurnColumns {
    const out = new TurnColumns()
    for (let i = Math.max(0, from); i < Math.min(to, table.length); i++) {
      out.pushFields(table.turnAt(i), table.startAt(i), table.endAt(i), table.eventCountAt(i), table.tsAt(i))
    }
    return out
  }

  get length(): number {
    return this.size
  }

  /** Appends `entry` as the newest entry. */
  push(entry: TurnEntry): void {
    this.pushFields(entry.turn_number, entry.start_offset, entry.end_offset, entry.event_count, entry.ts)
  }

  /** Appends an entry given field by field. */
  pushFields(turn: number, start: number, end: number, eventCount: number, ts: string): void {
    const i = this.size
    const b = i >>> 12
    const slot = i & (BLOCK - 1)
    if (b === this.numbers.length) {
      // Blocks start small and double up to BLOCK entries: most sessions have a few dozen turns,
      // and a search build makes one table per session.
      this.numbers.push(new Float64Array(FIRST_BLOCK * FIELDS))
      this.forms.push(new Uint8Array(FIRST_BLOCK))
    }
    const held = this.forms[b]
    if (held !== undefined && slot >= held.length) {
      const capacity = Math.min(BLOCK, held.length * 2)
      const grownNumbers = new Float64Array(capacity * FIELDS)
      grownNumbers.set(this.numbers[b] ?? [])
      const grownForms = new Uint8Array(capacity)
      grownForms.set(held)
      this.numbers[b] = grownNumbers
      this.forms[b] = grownForms
    }
    const numbers = this.numbers[b]
    const forms = this.forms[b]
    if (numbers === undefined || forms === undefined) throw new RangeError(`turn columns block ${b} missing`)
    const at = (i & (BLOCK - 1)) * FIELDS
    numbers[at] = turn
    numbers[at + 1] = start
    numbers[at + 2] = end
    numbers[at + 3] = eventCount
    const packed = packTimestamp(ts)
    if (packed === undefined) {
      this.texts ??= new Map()
      this.texts.set(i, ts)
      forms[i & (BLOCK - 1)] = TS_TEXT
    } else {
      numbers[at + 4] = packed.ms
      forms[i & (BLOCK - 1)] = packed.form
    }
    this.size = i + 1
  }

  private field(i: number, k: number): number {
    if (!(i >= 0 && i < this.size)) throw new RangeError(`turn table index ${i} out of range 0..${this.size}`)
    const numbers = this.numbers[i >>> 12]
    const value = numbers?.[(i & (BLOCK - 1)) * FIELDS + k]
    if (value === undefined) throw new RangeError(`turn table index ${i} out of range 0..${this.size}`)
    return value
  }

  turnAt = (i: number): number => this.field(i, 0)
  startAt = (i: number): number => this.field(i, 1)
  endAt = (i: number): number => this.field(i, 2)
  eventCountAt = (i: number): number => this.field(i, 3)
  tsAt = (i: number): string => {
    const ms = this.field(i, 4)
    const form = this.forms[i >>> 12]?.[i & (BLOCK - 1)]
    if (form === TS_TEXT) return this.texts?.get(i) ?? ""
    const iso = new Date(ms).toISOString()
    return form === TS_UTC_OFFSET ? `${iso.slice(0, 23)}+00:00` : iso
  }

  /**
   * New columns with entries `from..` of these, their offsets moved by `offsetShift` and their
   * turn numbers by `turnShift` (a cap rewrite's eviction, a rescan's rebase).
   */
  slice(from = 0, offsetShift = 0, turnShift = 0): TurnColumns {
    const out = new TurnColumns()
    for (let i = Math.max(0, from); i < this.size; i++) {
      out.pushFields(
        this.turnAt(i) + turnShift,
        this.startAt(i) + offsetShift,
        this.endAt(i) + offsetShift,
        this.eventCountAt(i),
        this.tsAt(i)
      )
    }
    return out
  }
}

/**
 * The index as persisted: `closed` followed by `open` when a turn is open, as a view (no copy);
 * its length is read when asked, so take it after the last change.
 */
export const withOpenEntry = (closed: TurnTable, open: TurnEntry | undefined): TurnTable => {
  if (open === undefined) return closed
  const pick = <A>(i: number, fromClosed: (i: number) => A, fromOpen: A): A => {
    if (i === closed.length) return fromOpen
    return fromClosed(i)
  }
  return {
    get length() {
      return closed.length + 1
    },
    turnAt: (i) => pick(i, closed.turnAt, open.turn_number),
    startAt: (i) => pick(i, closed.startAt, open.start_offset),
    endAt: (i) => pick(i, closed.endAt, open.end_offset),
    eventCountAt: (i) => pick(i, closed.eventCountAt, open.event_count),
    tsAt: (i) => pick(i, closed.tsAt, open.ts)
  }
}
