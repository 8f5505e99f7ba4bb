import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import type { LifecycleKind } from "../../src/contract/LifecycleKind.ts"
import {
  applyLifecycleEvent,
  indexEntries,
  initialLogState,
  type LogState,
  resumeLogState,
  type Transition
} from "../../src/log/Lifecycle.ts"
import { initialManifest, type Manifest, type TurnEntry } from "../../src/log/SessionFiles.ts"
import { isIndexConsistent, isIndexValid } from "../../src/log/TurnIndex.ts"
import { entriesOf, turnTableOf } from "../../src/log/TurnTable.ts"

/** The persisted index of a run, as objects. */
const indexOf = (r: Run): Array<TurnEntry> => entriesOf(indexEntries(turnTableOf(r.closed), r.state))

interface Run {
  readonly state: LogState
  readonly closed: Array<TurnEntry>
  readonly transitions: Array<Transition>
  readonly fileLen: number
}

/** Folds kinds through the reducer the way the store does: each record is a line of `lineLen` bytes. */
const run = (kinds: ReadonlyArray<LifecycleKind>, base = 1, lineLen = 10, from?: Run): Run => {
  let state = from?.state ?? initialLogState(base)
  const closed = from?.closed.slice() ?? []
  const transitions: Array<Transition> = []
  let offset = from?.fileLen ?? 0
  kinds.forEach((kind) => {
    const t = applyLifecycleEvent(state, kind, { start: offset, end: offset + lineLen }, `ts-${offset}`)
    if (t.closed !== undefined) closed.push(t.closed)
    transitions.push(t)
    state = t.state
    offset += lineLen
  })
  return { state, closed, transitions, fileLen: offset }
}

const toManifest = (r: Run, base: number): Manifest => ({
  ...initialManifest("s", "t"),
  turn_count: r.state.turnCount,
  event_count: r.state.eventCount,
  status: r.state.status,
  in_turn: r.state.inTurn,
  persisted_file_len: r.fileLen,
  retained_turn_base: base
})

const Kind = Schema.Literals([
  "thread_started",
  "thread_completed",
  "turn_started",
  "turn_completed",
  "turn_failed",
  "other"
])
// Biased towards turns so that generated sequences contain many opened and closed turns.
const kinds = Arbitrary.array(
  Arbitrary.map(
    Arbitrary.schema(Schema.Tuple([Kind, Schema.Boolean])),
    ([kind, bias]) => bias && kind.startsWith("thread") ? "turn_started" : kind
  ),
  { maxLength: 60 }
)

describe("Lifecycle", () => {
  describe("initialLogState", () => {
    it("numbers the next turn from the given base", () => {
      assert.deepStrictEqual(initialLogState(1), {
        turnCount: 0,
        eventCount: 0,
        status: "active",
        inTurn: false,
        open: undefined
      })
      assert.strictEqual(initialLogState(7).turnCount, 6)
      assert.strictEqual(initialLogState(0).turnCount, 0)
    })
  })

  describe("transitions of docs/log.md#lifecycle", () => {
    it("thread.started makes the session active and is not a boundary", () => {
      const completed = run(["thread_completed"]).state
      const t = applyLifecycleEvent(completed, "thread_started", { start: 10, end: 20 }, "t")
      assert.strictEqual(t.state.status, "active")
      assert.isFalse(t.boundary)
      assert.isUndefined(t.closed)
    })

    it("thread.completed makes the session completed and is a boundary", () => {
      const t = applyLifecycleEvent(initialLogState(1), "thread_completed", { start: 0, end: 10 }, "t")
      assert.strictEqual(t.state.status, "completed")
      assert.isTrue(t.boundary)
    })

    it("turn.started opens turn turn_count + 1 with the record's span, one event and the given ts", () => {
      const t = applyLifecycleEvent(initialLogState(4), "turn_started", { start: 30, end: 45 }, "2026-01-01T00:00:00Z")
      assert.isFalse(t.boundary)
      assert.isTrue(t.state.inTurn)
      assert.strictEqual(t.state.turnCount, 3)
      assert.deepStrictEqual(t.state.open, {
        turn_number: 4,
        start_offset: 30,
        end_offset: 45,
        event_count: 1,
        ts: "2026-01-01T00:00:00Z"
      })
    })

    it("other records extend the open turn up to their end", () => {
      const r = run(["turn_started", "other", "other"])
      assert.deepStrictEqual(r.state.open, {
        turn_number: 1,
        start_offset: 0,
        end_offset: 30,
        event_count: 3,
        ts: "ts-0"
      })
      assert.isTrue(r.transitions.every((t) => !t.boundary))
    })

    it("turn.completed closes the open turn, counts it and is a boundary", () => {
      const r = run(["turn_started", "other", "turn_completed"])
      const last = r.transitions.at(-1)
      assert.isTrue(last?.boundary)
      assert.deepStrictEqual(last?.closed, {
        turn_number: 1,
        start_offset: 0,
        end_offset: 30,
        event_count: 3,
        ts: "ts-0"
      })
      assert.strictEqual(r.state.turnCount, 1)
      assert.isFalse(r.state.inTurn)
      assert.isUndefined(r.state.open)
    })

    it("turn.failed closes the open turn exactly like turn.completed", () => {
      const completed = run(["turn_started", "other", "turn_completed"])
      const failed = run(["turn_started", "other", "turn_failed"])
      assert.deepStrictEqual(failed.state, completed.state)
      assert.deepStrictEqual(failed.closed, completed.closed)
      assert.isTrue(failed.transitions.at(-1)?.boundary)
    })

    it("completing or failing outside a turn is a boundary that changes no entry and no turn count", () => {
      const before = run(["turn_started", "turn_completed", "other"])
      for (const kind of ["turn_completed", "turn_failed"] as const) {
        const t = applyLifecycleEvent(before.state, kind, { start: 30, end: 40 }, "t")
        assert.isTrue(t.boundary)
        assert.isUndefined(t.closed)
        assert.deepStrictEqual(t.state, { ...before.state, eventCount: before.state.eventCount + 1 })
      }
    })
  })

  describe("consequences listed in docs/log.md#lifecycle", () => {
    it("only turn.started creates a turn and only turn.completed or turn.failed closes one", () => {
      const r = run(["thread_started", "other", "thread_completed", "other"])
      assert.strictEqual(r.closed.length, 0)
      assert.isFalse(r.state.inTurn)
      // turn.blocked, matrix.updated, error … are all `other`: they never close a turn.
      const blocked = run(["turn_started", "other", "other", "thread_started"])
      assert.isTrue(blocked.state.inTurn)
      assert.strictEqual(blocked.closed.length, 0)
    })

    it("records outside any turn belong to no entry but are counted", () => {
      const r = run(["thread_started", "other", "turn_started", "turn_completed", "other", "other"])
      assert.strictEqual(r.state.eventCount, 6)
      assert.deepStrictEqual(r.closed, [{
        turn_number: 1,
        start_offset: 20,
        end_offset: 40,
        event_count: 2,
        ts: "ts-20"
      }])
    })

    it("only thread.completed makes the session terminal and a later thread or turn start resumes it", () => {
      assert.strictEqual(run(["turn_started", "turn_completed", "turn_failed", "other"]).state.status, "active")
      assert.strictEqual(run(["thread_completed"]).state.status, "completed")
      assert.strictEqual(run(["thread_completed", "other", "turn_completed"]).state.status, "completed")
      assert.strictEqual(run(["thread_completed", "thread_started"]).state.status, "active")
      assert.strictEqual(run(["thread_completed", "turn_started"]).state.status, "active")
    })

    it("turn_count is the last closed turn and an open turn is not counted", () => {
      const r = run(["turn_started", "turn_completed", "turn_started", "other"])
      assert.strictEqual(r.state.turnCount, 1)
      assert.strictEqual(r.state.open?.turn_number, 2)
    })

    it("turn numbers continue from the retained base after evictions, never from the index length", () => {
      const r = run(["turn_started", "turn_completed", "turn_started", "turn_failed"], 8)
      assert.deepStrictEqual(r.closed.map((e) => e.turn_number), [8, 9])
      assert.strictEqual(r.state.turnCount, 9)
    })

    it("a nested turn.started closes the open turn as it stands and opens the next number (docs/differences.md)", () => {
      // Deviation from the reference, which would open a second turn 1 here.
      const r = run(["turn_started", "other", "turn_started", "other", "turn_completed"])
      const nested = r.transitions[2]
      assert.isFalse(nested?.boundary)
      assert.deepStrictEqual(nested?.closed, {
        turn_number: 1,
        start_offset: 0,
        end_offset: 20,
        event_count: 2,
        ts: "ts-0"
      })
      assert.strictEqual(nested?.state.turnCount, 1)
      assert.deepStrictEqual(r.closed.map((e) => [e.turn_number, e.start_offset, e.end_offset, e.event_count]), [
        [1, 0, 20, 2],
        [2, 20, 50, 3]
      ])
      assert.strictEqual(r.state.turnCount, 2)
    })
  })

  describe("properties", () => {
    it.prop("random sequences keep turns contiguous, monotonic and well-formed", { kinds }, ({ kinds }) => {
      const base = 1 + (kinds.length % 5)
      const r = run(kinds, base)
      assert.strictEqual(r.state.eventCount, kinds.length)
      assert.strictEqual(r.state.inTurn, r.state.open !== undefined)
      const all = indexOf(r)
      all.forEach((entry, i) => assert.strictEqual(entry.turn_number, base + i))
      let previousEnd = 0
      for (const entry of r.closed) {
        assert.isAtLeast(entry.event_count, 1)
        assert.isAtLeast(entry.start_offset, previousEnd)
        assert.isAtLeast(entry.end_offset, entry.start_offset)
        previousEnd = entry.end_offset
      }
      assert.strictEqual(r.state.turnCount, r.closed.at(-1)?.turn_number ?? base - 1)
      const starts = kinds.filter((k) => k === "turn_started").length
      assert.strictEqual(all.length, starts)
    })

    it.prop(
      "the reducer's index is always valid for the file and consistent with its manifest",
      { kinds },
      ({ kinds }) => {
        const r = run(kinds, 3)
        const entries = indexOf(r)
        assert.isTrue(isIndexValid(entries, r.fileLen))
        assert.isTrue(isIndexConsistent(entries, toManifest(r, 3)))
      }
    )

    it.prop(
      "resuming from persisted metadata mid-way ends in the same state as one uninterrupted run",
      { kinds, cut: Schema.Int },
      ({ cut, kinds }) => {
        const at = Math.abs(cut) % (kinds.length + 1)
        const whole = run(kinds, 2)
        const prefix = run(kinds.slice(0, at), 2)
        const resumed = resumeLogState(toManifest(prefix, 2), turnTableOf(indexOf(prefix)))
        const rest = run(kinds.slice(at), 2, 10, { ...prefix, state: resumed.state, closed: entriesOf(resumed.closed) })
        assert.deepStrictEqual(rest.state, whole.state)
        assert.deepStrictEqual(rest.closed, whole.closed)
      }
    )
  })
})
