/**
 * The cap-eviction planner (docs/log.md#cap-eviction "Plan", docs/differences.md): decides, without I/O,
 * which whole turns to cut from the front of `events.jsonl` when a session exceeds its event
 * or byte budget. The store executes the plan (summary hook, checkpoints, marker, rewrite).
 *
 * Unlike the reference, which evicts just enough to get back under the cap and therefore
 * rewrites the whole file again on every turn once a session sits at the cap, this planner
 * evicts down to a low-water mark (90 % of each budget by default): a session at the cap
 * rewrites once per ~10 % of the cap instead of once per turn. It also honours a byte budget
 * so a few huge tool outputs cannot grow the log without bound.
 */
import { Option } from "effect"
import type { TurnEntry } from "./SessionFiles.ts"
import type { TurnTable } from "./TurnTable.ts"
import { asTurnTable } from "./TurnTable.ts"

/** The default event budget (docs/log.md#constants `DEFAULT_MAX_EVENTS`); 0 disables it. */
export const DEFAULT_MAX_EVENTS = 10_000

/** The default byte budget of `events.jsonl` (64 MiB); 0 disables it. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024

/** The default fraction of each budget an eviction brings the log down to. */
export const DEFAULT_EVICTION_LOW_WATER = 0.9

/**
 * Limits of one session's log. A budget of 0 disables it. `lowWater` (0..1) is the fraction of
 * each enabled budget an eviction aims for once a budget is exceeded; 1 reproduces the
 * reference (evict just enough), values outside 0..1 are clamped and a non-finite one means
 * the default.
 */
export interface CapBudgets {
  readonly maxEvents: number
  readonly maxBytes: number
  readonly lowWater: number
}

/** The default budgets: 10 000 events, 64 MiB, evicting down to 90 %. */
export const defaultCapBudgets: CapBudgets = {
  maxEvents: DEFAULT_MAX_EVENTS,
  maxBytes: DEFAULT_MAX_BYTES,
  lowWater: DEFAULT_EVICTION_LOW_WATER
}

/**
 * What to evict: the prefix `[0, truncateOffset)` of the file, which ends exactly at the end of
 * the `turns`-th oldest index entry. `evictedEvents` sums those entries' `event_count` — the
 * in-turn records only; the store recounts the prefix (out-of-turn lines included) before it
 * adjusts `event_count`. `retainedTurnBase` is the number of the first turn that stays.
 */
export interface EvictionPlan {
  readonly truncateOffset: number
  readonly evictedEvents: number
  readonly turns: number
  readonly retainedTurnBase: number
}

/** The log facts the planner looks at; `entries` includes the open turn's entry last while `inTurn`. */
export interface CapEvictionInput<Entries extends ReadonlyArray<TurnEntry> | TurnTable = ReadonlyArray<TurnEntry>> {
  readonly entries: Entries
  readonly inTurn: boolean
  readonly eventCount: number
  readonly fileLen: number
  readonly turnCount: number
}

const clampLowWater = (lowWater: number): number =>
  Number.isFinite(lowWater) ? Math.min(Math.max(lowWater, 0), 1) : DEFAULT_EVICTION_LOW_WATER

/**
 * Plans a cap eviction, or none. Triggers only when `eventCount > maxEvents` or
 * `fileLen > maxBytes` (for enabled budgets); then takes whole turns oldest first — never the
 * open turn — until every enabled budget is at or below its low-water target
 * (`floor(budget × lowWater)`) or no evictable turn is left. No plan when no turn was taken or
 * the cut would be at offset 0.
 *
 * **Gotchas**: O(1) when under budget, O(turns taken) otherwise, so it is cheap to call after
 * every append. When only the open turn is left the log stays over budget until that turn
 * closes. The entries' offsets must be relative to the current file.
 */
export const planCapEviction = <Entries extends ReadonlyArray<TurnEntry> | TurnTable>(
  input: CapEvictionInput<Entries>,
  budgets: CapBudgets
): Option.Option<EvictionPlan> => {
  const eventsEnabled = budgets.maxEvents > 0
  const bytesEnabled = budgets.maxBytes > 0
  const overEvents = eventsEnabled && input.eventCount > budgets.maxEvents
  const overBytes = bytesEnabled && input.fileLen > budgets.maxBytes
  if (!overEvents && !overBytes) return Option.none()

  const lowWater = clampLowWater(budgets.lowWater)
  const eventTarget = eventsEnabled ? Math.floor(budgets.maxEvents * lowWater) : Number.POSITIVE_INFINITY
  const byteTarget = bytesEnabled ? Math.floor(budgets.maxBytes * lowWater) : Number.POSITIVE_INFINITY
  const entries = asTurnTable(input.entries)
  const evictable = input.inTurn ? entries.length - 1 : entries.length

  let turns = 0
  let evictedEvents = 0
  let truncateOffset = 0
  while (turns < evictable) {
    if (input.eventCount - evictedEvents <= eventTarget && input.fileLen - truncateOffset <= byteTarget) break
    evictedEvents += entries.eventCountAt(turns)
    truncateOffset = entries.endAt(turns)
    turns++
  }
  if (turns === 0 || truncateOffset === 0) return Option.none()

  return Option.some({
    truncateOffset,
    evictedEvents,
    turns,
    retainedTurnBase: turns < entries.length ? entries.turnAt(turns) : input.turnCount + 1
  })
}
