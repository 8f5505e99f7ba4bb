/**
 * Cap rewrite under injected faults (docs/log.md#cap-eviction crash windows, docs/testing.md): every system call
 * made by an append that triggers a rewrite is failed in turn (EIO), torn (for writes), or
 * followed by a simulated power loss. After each, the live handle either keeps working with an
 * in-memory view a rescan agrees with, or reports itself unusable; and a reopen always finds
 * the acknowledged turns intact (or evicted as a whole), the matrix checkpoints present, no
 * marker left, and manifest and index equal to a fresh rescan.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { Cause, Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Fault } from "../../src/fs/SessionFs.ts"
import { FaultController } from "../../src/fs/SessionFs.ts"
import { StoreIoError } from "../../src/fs/StoreError.ts"
import * as EventLog from "../../src/log/EventLog.ts"
import type { SessionLog } from "../../src/log/EventLog.ts"
import {
  assertSessionConsistent,
  defined,
  faultyStoreLayer,
  fileEvents,
  labelledTurn,
  labelOf,
  LONG,
  matrixUpdated,
  message,
  seededRandom,
  storeLayer,
  tempRoot,
  turnCompleted,
  turnStarted
} from "../fixtures/capTestkit.ts"

const MAX_EVENTS = 12

interface Step {
  readonly event: ThreadEvent
  readonly turn: number | undefined
}

/**
 * 12 events, then the trigger: m1 (outside turns), turn 1 (3), turn 2 with m2 inside (4),
 * turn 3 (3), turn 4's start. The 13th event evicts turn 1 with m1 before it, so m1 comes back
 * as a checkpoint. `boundary` makes the trigger `turn.completed` (metadata persisted first),
 * otherwise a message in the middle of turn 4.
 */
const script = (boundary: boolean) => {
  const steps: Array<Step> = [{ event: matrixUpdated("m1", 1), turn: undefined }]
  const turn = (label: number, events: ReadonlyArray<ThreadEvent>) => {
    for (const event of events) steps.push({ event, turn: label })
  }
  turn(1, labelledTurn(1, 1))
  turn(2, [turnStarted(2), message("turn 2 message 0"), matrixUpdated("m2", 2), turnCompleted])
  turn(3, labelledTurn(3, 1))
  const t4 = boundary ? labelledTurn(4, 0) : labelledTurn(4, 1)
  turn(4, [defined(t4[0], "turn 4 start")])
  const trigger: Step = { event: defined(t4[1], "the trigger"), turn: 4 }
  const rest: Array<Step> = t4.slice(2).map((event) => ({ event, turn: 4 }))
  for (const event of labelledTurn(5, 1)) rest.push({ event, turn: 5 })
  const expected = new Map<number, Array<ThreadEvent>>()
  for (const s of [...steps, trigger, ...rest]) {
    if (s.turn !== undefined) expected.set(s.turn, [...(expected.get(s.turn) ?? []), s.event])
  }
  return { before: steps, trigger, rest, expected }
}

type Script = ReturnType<typeof script>

type Variant = "fail" | "tear" | "crash"

/** The reopen checks every variant shares. */
const checkReopened = (log: SessionLog, s: Script, acked: ReadonlySet<number>, maxBase: number, where: string) =>
  Effect.gen(function*() {
    const manifest = yield* assertSessionConsistent(log, where)
    const base = manifest.retained_turn_base ?? 1
    assert.isFalse(fs.existsSync(log.paths.marker), `${where}: marker removed`)
    // Acknowledged turns are intact unless evicted as a whole, and only the planned ones can be.
    assert.isAtMost(base, maxBase, `${where}: retained base`)
    for (const entry of yield* log.turnIndex) {
      const turn = yield* log.reconstructTurn(entry.turn_number)
      assert.strictEqual(labelOf(turn.events), entry.turn_number, `${where}: turn ${entry.turn_number} numbering`)
      const want = s.expected.get(entry.turn_number) ?? []
      if (acked.has(entry.turn_number)) {
        assert.deepStrictEqual(turn.events, want, `${where}: acknowledged turn ${entry.turn_number}`)
      } else {
        // Unacknowledged: whatever survived is a prefix of what was appended, never a duplicate.
        assert.deepStrictEqual(turn.events, want.slice(0, turn.events.length), `${where}: turn ${entry.turn_number}`)
      }
    }
    for (const label of acked) {
      if (label >= base) {
        assert.isTrue((yield* log.turnIndex).some((e) => e.turn_number === label), `${where}: ${label}`)
      }
    }
    // The newest snapshot of each matrix is still in the log (as a checkpoint once evicted).
    const ids = fileEvents(log.paths.events).flatMap((e) => e.type === "matrix.updated" ? [e.spec.id] : [])
    assert.includeMembers(ids, ["m1", "m2"], `${where}: matrix snapshots`)
    assert.strictEqual(new Set(ids).size, ids.length, `${where}: one snapshot per matrix`)
    return manifest
  })

/** Runs the script with `fault` armed just before the trigger; returns what happened for the report. */
const runOnce = (s: Script, variant: Variant, fault: Fault | undefined) =>
  Effect.gen(function*() {
    const root = yield* tempRoot("cap-fault")
    const open = EventLog.open({ sessionsDir: root, sessionId: "f", maxEvents: MAX_EVENTS, maxBytes: 0 })
    const acked = new Set([1, 2, 3])
    const outcome = yield* Effect.scoped(Effect.gen(function*() {
      const ctl = yield* FaultController
      const log = yield* open
      for (const step of s.before) yield* log.append(step.event)
      yield* ctl.reset
      if (fault !== undefined) yield* ctl.arm(fault)
      const exit = yield* Effect.exit(log.append(s.trigger.event))
      const calls = yield* ctl.calls
      const trace = yield* ctl.trace
      if (variant === "crash") {
        yield* ctl.crash
        return { exit, calls, trace, broken: true }
      }
      // A fault planned past the trigger's last call must not fire later.
      yield* ctl.reset
      // The live handle either carries on with a view a rescan agrees with, or refuses to.
      let broken = false
      for (const step of s.rest) {
        const next = yield* Effect.exit(log.append(step.event))
        if (Exit.isFailure(next)) {
          broken = true
          const flushed = yield* Effect.exit(log.flush)
          assert.isTrue(
            Exit.isFailure(flushed) && Cause.squash(flushed.cause) instanceof StoreIoError &&
              (Cause.squash(flushed.cause) as StoreIoError).code === "EUNAVAILABLE",
            `after the trigger an append failed (${Cause.pretty(next.cause)}) on a handle that is not unusable`
          )
          break
        }
      }
      if (!broken) {
        acked.add(5)
        if (Exit.isSuccess(exit)) acked.add(4)
        yield* checkReopened(log, s, acked, 3, "live handle")
      }
      return { exit, calls, trace, broken }
    }))
    // Reopen on the plain file system, as the next process would.
    yield* Effect.scoped(
      Effect.gen(function*() {
        const log = yield* open
        yield* checkReopened(log, s, acked, variant === "crash" ? 2 : 3, "reopen")
        // And the session goes on with contiguous numbers.
        const before = yield* log.manifest
        const label = before.turn_count + (before.in_turn === true ? 2 : 1)
        for (const event of labelledTurn(label, 0)) yield* log.append(event)
        const after = yield* assertSessionConsistent(log, "after reopen")
        assert.strictEqual(after.turn_count, label)
      }).pipe(Effect.provide(storeLayer))
    )
    const leftovers = fs.readdirSync(path.join(root, "f", "index")).filter((n) => n.endsWith(".tmp"))
    if (variant !== "crash") assert.deepStrictEqual(leftovers, [], "no temp files after a handled failure")
    return outcome
  }).pipe(Effect.provide(faultyStoreLayer()))

describe("CapRewrite faults", () => {
  for (const boundary of [false, true]) {
    const s = script(boundary)
    const label = boundary ? "at a turn boundary" : "in the middle of a turn"

    it.effect(`a clean trigger ${label} rewrites once and carries m1 over`, () =>
      Effect.gen(function*() {
        const result = yield* runOnce(s, "fail", undefined)
        assert.isTrue(Exit.isSuccess(result.exit))
        assert.isFalse(result.broken)
        assert.include(result.trace, "rename")
      }))

    // The rewrite proper is the same in both scenarios; the boundary one adds the barrier's
    // calls in front. By default that one is sampled (every third call, seeded offset).
    const stride = boundary && !LONG ? 3 : 1
    for (const variant of ["fail", "crash", "tear"] as const) {
      it.effect(
        `every I/O call of a rewrite ${label}: ${variant}${stride > 1 ? " (sampled)" : ""}`,
        () =>
          Effect.gen(function*() {
            const clean = yield* runOnce(s, "fail", undefined)
            const writes = clean.trace.filter((op) => op === "write").length
            const total = variant === "tear" ? writes : clean.calls
            const outcomes: Record<string, number> = {}
            const first = variant === "tear" ? 0 : seededRandom(17).int(0, stride - 1)
            for (let call = first; call < total; call += variant === "tear" ? 1 : stride) {
              const fault: Fault = variant === "tear"
                ? { _tag: "TearWrite", call, keepBytes: 7, code: "ENOSPC" }
                : { _tag: "Fail", call, code: "EIO" }
              const op = variant === "tear" ? "write" : clean.trace[call]
              const result = yield* runOnce(s, variant, fault).pipe(
                Effect.catchDefect((defect) =>
                  Effect.die(new Error(`${variant} at call ${call} (${op}): ${String(defect)}`, { cause: defect }))
                )
              )
              const key = `${Exit.isSuccess(result.exit) ? "ok" : "failed"}${result.broken ? "+unusable" : ""}`
              outcomes[key] = (outcomes[key] ?? 0) + 1
            }
            console.log(`${variant} ${label}: ${total} calls, outcomes ${JSON.stringify(outcomes)}`)
            assert.isAbove(total, variant === "tear" ? 3 : 40)
          }),
        120_000
      )
    }
  }

  it.effect("a failure after the log was renamed into place makes the handle unusable; reopen recovers", () =>
    Effect.gen(function*() {
      const s = script(false)
      const clean = yield* runOnce(s, "fail", undefined)
      // Renames of the trigger: summary, marker, events.jsonl, index, manifest. The call after
      // the third opens the session directory to fsync the rename.
      const renames = clean.trace.flatMap((op, i) => op === "rename" ? [i] : [])
      assert.strictEqual(renames.length, 5)
      const afterRename = (renames[2] ?? 0) + 1
      assert.strictEqual(clean.trace[afterRename], "open")
      const root = yield* tempRoot("cap-fault-rename")
      const open = EventLog.open({ sessionsDir: root, sessionId: "f", maxEvents: MAX_EVENTS, maxBytes: 0 })
      yield* Effect.scoped(Effect.gen(function*() {
        const ctl = yield* FaultController
        const log = yield* open
        for (const step of s.before) yield* log.append(step.event)
        yield* ctl.reset
        yield* ctl.arm({ _tag: "Fail", call: afterRename, code: "EIO" })
        const error = yield* Effect.flip(log.append(s.trigger.event))
        assert.strictEqual(error._tag, "StoreIoError")
        // The new contents are in place, memory still describes the old file: refuse to go on.
        const marker = JSON.parse(fs.readFileSync(log.paths.marker, "utf8"))
        assert.strictEqual(fs.statSync(log.paths.events).size, marker.new_file_len)
        const next = yield* Effect.flip(log.append(defined(s.rest[0], "a step after the trigger").event))
        assert.strictEqual(next._tag === "StoreIoError" ? next.code : next._tag, "EUNAVAILABLE")
        assert.strictEqual((yield* Effect.flip(log.reconstructTurn(2)))._tag, "StoreIoError")
      })).pipe(Effect.provide(faultyStoreLayer()))
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* open
        const manifest = yield* checkReopened(log, s, new Set([1, 2, 3]), 2, "reopen after the rename")
        assert.strictEqual(manifest.retained_turn_base, 2)
      })).pipe(Effect.provide(storeLayer))
    }).pipe(Effect.provide(faultyStoreLayer())))
})
