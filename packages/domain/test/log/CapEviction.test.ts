import { assert, describe, it } from "@effect/vitest"
import { Option, Schema } from "effect"
import type { LifecycleKind } from "../../src/contract/LifecycleKind.ts"
import {
  type CapBudgets,
  type CapEvictionInput,
  DEFAULT_EVICTION_LOW_WATER,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_EVENTS,
  defaultCapBudgets,
  type EvictionPlan,
  planCapEviction
} from "../../src/log/CapEviction.ts"
import { applyLifecycleEvent, initialLogState, type LogState } from "../../src/log/Lifecycle.ts"
import type { TurnEntry } from "../../src/log/SessionFiles.ts"

const entry = (turn_number: number, start_offset: number, end_offset: number, event_count: number): TurnEntry => ({
  turn_number,
  start_offset,
  end_offset,
  event_count,
  ts: "t"
})

/** `turns` adjacent turns of `events` records of `bytes` bytes each, numbered from `base`. */
const uniformLog = (turns: number, events: number, bytes: number, base = 1, inTurn = false): CapEvictionInput => {
  const entries = Array.from(
    { length: turns },
    (_, i) => entry(base + i, i * events * bytes, (i + 1) * events * bytes, events)
  )
  return {
    entries,
    inTurn,
    eventCount: turns * events,
    fileLen: turns * events * bytes,
    turnCount: base + turns - 1 - (inTurn ? 1 : 0)
  }
}

const budgets = (patch: Partial<CapBudgets>): CapBudgets => ({ maxEvents: 0, maxBytes: 0, lowWater: 0.9, ...patch })

const plan = (input: CapEvictionInput, b: CapBudgets): EvictionPlan => {
  const result = planCapEviction(input, b)
  if (Option.isNone(result)) return assert.fail("expected a plan")
  return result.value
}

describe("CapEviction", () => {
  it("exposes the documented defaults", () => {
    assert.strictEqual(DEFAULT_MAX_EVENTS, 10_000)
    assert.strictEqual(DEFAULT_MAX_BYTES, 64 * 1024 * 1024)
    assert.strictEqual(DEFAULT_EVICTION_LOW_WATER, 0.9)
    assert.deepStrictEqual(defaultCapBudgets, { maxEvents: 10_000, maxBytes: 64 * 1024 * 1024, lowWater: 0.9 })
  })

  describe("trigger", () => {
    it("plans nothing at or under the budgets", () => {
      const log = uniformLog(20, 5, 10)
      assert.isTrue(Option.isNone(planCapEviction(log, budgets({ maxEvents: 100, maxBytes: 1000 }))))
    })

    it("plans nothing when both budgets are disabled", () => {
      assert.isTrue(Option.isNone(planCapEviction(uniformLog(20, 5, 10), budgets({}))))
    })

    it("plans nothing when only the open turn is over budget", () => {
      const open = { entries: [entry(3, 0, 900, 90)], inTurn: true, eventCount: 90, fileLen: 900, turnCount: 2 }
      assert.isTrue(Option.isNone(planCapEviction(open, budgets({ maxEvents: 10 }))))
    })

    it("plans nothing when there is no turn to take or the cut would be at offset 0", () => {
      const outOfTurn = { entries: [], inTurn: false, eventCount: 50, fileLen: 500, turnCount: 0 }
      assert.isTrue(Option.isNone(planCapEviction(outOfTurn, budgets({ maxEvents: 10 }))))
      const empty = { entries: [entry(1, 0, 0, 1)], inTurn: false, eventCount: 50, fileLen: 500, turnCount: 1 }
      assert.isTrue(Option.isNone(planCapEviction(empty, budgets({ maxEvents: 10 }))))
    })
  })

  describe("plan", () => {
    it("evicts whole turns down to the event low-water mark, not just under the cap", () => {
      // 100 events, cap 90: the target is 81, so four 5-event turns go (100 − 20 = 80).
      assert.deepStrictEqual(plan(uniformLog(20, 5, 10), budgets({ maxEvents: 90 })), {
        truncateOffset: 200,
        evictedEvents: 20,
        turns: 4,
        retainedTurnBase: 5
      })
    })

    it("reproduces the reference's just-under-the-cap plan with a low-water mark of 1", () => {
      assert.strictEqual(plan(uniformLog(20, 5, 10), budgets({ maxEvents: 90, lowWater: 1 })).turns, 2)
    })

    it("evicts down to the byte low-water mark", () => {
      // 1000 bytes, budget 500: the target is 450, so eleven 50-byte turns go.
      const p = plan(uniformLog(20, 5, 10), budgets({ maxBytes: 500 }))
      assert.strictEqual(p.turns, 11)
      assert.strictEqual(p.truncateOffset, 550)
    })

    it("keeps evicting until every enabled budget is at its target, triggered or not", () => {
      // Five small turns (50 bytes) then five big ones (500 bytes): 50 events, 2750 bytes.
      const entries = Array.from(
        { length: 10 },
        (_, i) =>
          i < 5 ? entry(i + 1, i * 50, (i + 1) * 50, 5) : entry(i + 1, 250 + (i - 5) * 500, 250 + (i - 4) * 500, 5)
      )
      const log = { entries, inTurn: false, eventCount: 50, fileLen: 2750, turnCount: 10 }
      // Only the event cap triggers (target 44: two turns would do), but the byte target of 2475 needs a
      // cut at or past 275 bytes, i.e. the first big turn too.
      const p = plan(log, budgets({ maxEvents: 49, maxBytes: 2750 }))
      assert.strictEqual(p.turns, 6)
      assert.strictEqual(p.truncateOffset, 750)
      assert.strictEqual(plan(log, budgets({ maxEvents: 49 })).turns, 2)
    })

    it("evicts a single huge completed turn that exceeds the byte budget", () => {
      const huge = { entries: [entry(1, 0, 10_000, 2)], inTurn: false, eventCount: 3, fileLen: 10_040, turnCount: 1 }
      assert.deepStrictEqual(plan(huge, budgets({ maxEvents: 100, maxBytes: 1000 })), {
        truncateOffset: 10_000,
        evictedEvents: 2,
        turns: 1,
        retainedTurnBase: 2
      })
    })

    it("never takes the open turn and then retains from its number", () => {
      const log = uniformLog(10, 5, 10, 4, true)
      const p = plan(log, budgets({ maxEvents: 5 }))
      assert.strictEqual(p.turns, 9)
      assert.strictEqual(p.retainedTurnBase, 13)
      assert.strictEqual(p.truncateOffset, log.entries[8]?.end_offset)
    })

    it("continues numbering after the last closed turn when every turn is evicted", () => {
      const p = plan(uniformLog(3, 5, 10, 7), budgets({ maxEvents: 5, lowWater: 0 }))
      assert.strictEqual(p.turns, 3)
      assert.strictEqual(p.retainedTurnBase, 10)
    })

    it("clamps the low-water mark and falls back to the default when it is not finite", () => {
      const log = uniformLog(20, 5, 10)
      assert.strictEqual(plan(log, budgets({ maxEvents: 90, lowWater: Number.NaN })).turns, 4)
      assert.strictEqual(plan(log, budgets({ maxEvents: 90, lowWater: 7 })).turns, 2)
      assert.strictEqual(plan(log, budgets({ maxEvents: 90, lowWater: -1 })).turns, 20)
    })
  })

  describe("properties", () => {
    const Small = (minimum: number, maximum: number) =>
      Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum, maximum })))
    const Scenario = Schema.Struct({
      // [events in the turn, bytes per record, out-of-turn records before the turn]
      turns: Schema.Array(Schema.Tuple([Small(1, 10), Small(1, 200), Small(0, 3)])),
      inTurn: Schema.Boolean,
      base: Small(1, 50),
      trailing: Small(0, 5),
      maxEvents: Small(0, 200),
      maxBytes: Small(0, 20_000),
      lowWaterPercent: Small(0, 100)
    })

    const build = (s: typeof Scenario.Type): { input: CapEvictionInput; budgets: CapBudgets } => {
      let offset = 0
      let eventCount = 0
      const entries: Array<TurnEntry> = []
      s.turns.forEach(([events, bytes, outside], i) => {
        offset += outside * 10
        eventCount += outside + events
        entries.push(entry(s.base + i, offset, offset + events * bytes, events))
        offset += events * bytes
      })
      const inTurn = s.inTurn && entries.length > 0
      if (!inTurn) {
        offset += s.trailing * 10
        eventCount += s.trailing
      }
      return {
        input: {
          entries,
          inTurn,
          eventCount,
          fileLen: offset,
          turnCount: s.base + entries.length - 1 - (inTurn ? 1 : 0)
        },
        budgets: { maxEvents: s.maxEvents, maxBytes: s.maxBytes, lowWater: s.lowWaterPercent / 100 }
      }
    }

    const overBudget = (input: CapEvictionInput, b: CapBudgets) =>
      (b.maxEvents > 0 && input.eventCount > b.maxEvents) || (b.maxBytes > 0 && input.fileLen > b.maxBytes)

    const atTargets = (input: CapEvictionInput, b: CapBudgets, evicted: number, cut: number) =>
      (b.maxEvents === 0 || input.eventCount - evicted <= Math.floor(b.maxEvents * b.lowWater))
      && (b.maxBytes === 0 || input.fileLen - cut <= Math.floor(b.maxBytes * b.lowWater))

    it.prop("plans exactly the shortest prefix of closed turns that reaches the targets", { s: Scenario }, ({ s }) => {
      const { budgets: b, input } = build(s)
      const evictable = input.inTurn ? input.entries.length - 1 : input.entries.length
      const result = planCapEviction(input, b)
      if (!overBudget(input, b)) {
        assert.isTrue(Option.isNone(result), "no plan under budget")
        return
      }
      if (evictable === 0) {
        assert.isTrue(Option.isNone(result), "the open turn alone is never evicted")
        return
      }
      const p = Option.getOrThrow(result)
      assert.isAtLeast(p.turns, 1)
      assert.isAtMost(p.turns, evictable, "never the open turn")
      const taken = input.entries.slice(0, p.turns)
      assert.strictEqual(p.truncateOffset, taken.at(-1)?.end_offset)
      assert.strictEqual(p.evictedEvents, taken.reduce((n, e) => n + e.event_count, 0))
      assert.strictEqual(p.retainedTurnBase, input.entries[p.turns]?.turn_number ?? input.turnCount + 1)
      assert.isTrue(
        p.turns === evictable || atTargets(input, b, p.evictedEvents, p.truncateOffset),
        "targets reached unless only the open turn remains"
      )
      const previous = input.entries[p.turns - 2]
      const fewer = input.entries.slice(0, p.turns - 1).reduce((n, e) => n + e.event_count, 0)
      assert.isFalse(atTargets(input, b, fewer, previous?.end_offset ?? 0), "no turn more than needed")
    }, { arbitrary: { runs: 300 } })
  })

  describe("a long session at the cap", () => {
    /** Runs `turns` turns of `eventsPerTurn` 100-byte records through the reducer, planning after every append. */
    const simulate = (turns: number, eventsPerTurn: number, b: CapBudgets) => {
      const kinds: Array<LifecycleKind> = [
        "turn_started",
        ...Array.from({ length: eventsPerTurn - 2 }, (): LifecycleKind => "other"),
        "turn_completed"
      ]
      let state: LogState = initialLogState(1)
      // The index as the store keeps it: closed entries, then the open entry while in a turn (O(1) per record).
      let index: Array<TurnEntry> = []
      let fileLen = 0
      let evictions = 0
      let maxSeen = 0
      for (let turn = 0; turn < turns; turn++) {
        for (const kind of kinds) {
          const t = applyLifecycleEvent(state, kind, { start: fileLen, end: fileLen + 100 }, "t")
          fileLen += 100
          if (state.open !== undefined) index.pop()
          if (t.closed !== undefined) index.push(t.closed)
          if (t.state.open !== undefined) index.push(t.state.open)
          state = t.state
          const p = planCapEviction(
            { entries: index, inTurn: state.inTurn, eventCount: state.eventCount, fileLen, turnCount: state.turnCount },
            b
          )
          if (Option.isSome(p)) {
            const { evictedEvents, truncateOffset, turns: n } = p.value
            const shift = (e: TurnEntry): TurnEntry => ({
              ...e,
              start_offset: e.start_offset - truncateOffset,
              end_offset: e.end_offset - truncateOffset
            })
            index = index.slice(n).map(shift)
            state = {
              ...state,
              eventCount: state.eventCount - evictedEvents,
              open: state.open === undefined ? undefined : shift(state.open)
            }
            fileLen -= truncateOffset
            evictions++
          }
          maxSeen = Math.max(maxSeen, state.eventCount)
        }
      }
      return { evictions, maxSeen, state }
    }

    it("rewrites about once per tenth of the cap instead of once per turn", () => {
      const turns = 20_000
      const { evictions, maxSeen, state } = simulate(turns, 5, budgets({ maxEvents: 1_000 }))
      assert.isAtLeast(evictions, 1)
      assert.isAtMost(evictions, 2 * (turns * 5) / (0.1 * 1_000))
      assert.isAtMost(maxSeen, 1_000 + 1, "the cap is exceeded by at most the record that triggers eviction")
      assert.strictEqual(state.turnCount, turns, "turn numbering is unaffected by eviction")
    })

    it("would rewrite on nearly every turn with the reference's low-water mark of 1", () => {
      const hysteresis = simulate(2_000, 5, budgets({ maxEvents: 1_000 })).evictions
      const reference = simulate(2_000, 5, budgets({ maxEvents: 1_000, lowWater: 1 })).evictions
      assert.isAtLeast(reference, 10 * hysteresis)
    })
  })
})
