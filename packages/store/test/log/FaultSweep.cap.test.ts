/**
 * Fault sweep over a cap rewrite (docs/log.md#cap-eviction, docs/testing.md): the trigger is a `turn.completed`
 * that crosses `maxEvents`, so one append runs the barrier and then the whole rewrite (summary
 * hook, marker, atomic replace of `events.jsonl` with a matrix checkpoint in front, index,
 * manifest, marker removal), followed by one more turn and a flush. Every call fails with
 * ENOSPC, EIO and EACCES, every call starts a power loss, every write is torn (then carrying on,
 * killed, or losing power). After each, beyond the checks of every sweep (crashSuiteSweep): only
 * turn 1 can be evicted, and only whole; each matrix snapshot survives exactly once; at most one
 * eviction summary exists, and one always does once the eviction happened.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import { matrixUpdated, seqMessage, startTurn, turnCompleted } from "../fixtures/crashSuiteChecks.ts"
import type { LogSweepSpec } from "../fixtures/crashSuiteSweep.ts"
import { quietLogs, runLogSweep } from "../fixtures/crashSuiteSweep.ts"
import { faultyLayer, testRoot } from "../fixtures/eventlogHelpers.ts"

const TS = "2026-01-01T00:00:00.000Z"
const MAX_EVENTS = 15

/**
 * Exactly `MAX_EVENTS` events: m1 (outside turns), turns 1–3 closed (m2 inside turn 2), turn 4
 * open. The trigger evicts m1 and turn 1, so m1 comes back as a checkpoint.
 */
const spec: LogSweepSpec = {
  name: "cap rewrite",
  options: { maxEvents: MAX_EVENTS, maxBytes: 0 },
  template: [
    { append: matrixUpdated("m1", 1) },
    { append: startTurn(1, TS) },
    { append: seqMessage(1, 1), seq: [1, 1] },
    { append: seqMessage(2), seq: [2, 1] },
    { append: turnCompleted },
    { append: startTurn(2, TS) },
    { append: seqMessage(3, 2), seq: [3, 2] },
    { append: matrixUpdated("m2", 2) },
    { append: turnCompleted },
    { append: startTurn(3) },
    { append: seqMessage(4, 3), seq: [4, 3] },
    { append: seqMessage(5), seq: [5, 3] },
    { append: turnCompleted },
    { append: startTurn(4, TS) },
    { append: seqMessage(6, 4), seq: [6, 4] }
  ],
  workload: [
    { append: turnCompleted },
    { append: startTurn(5) },
    { append: seqMessage(7, 5), seq: [7, 5] },
    { append: turnCompleted },
    { flush: true }
  ],
  keeps: [1, 100, 1_000_000],
  matrices: ["m1", "m2"],
  check: (paths, found, complete, label) => {
    assert.isAtMost(found.base, 2, `${label}: only turn 1 is evictable`)
    if (complete) assert.strictEqual(found.base, 2, `${label}: a surviving handle completes the eviction`)
    const summaries = fs.readdirSync(paths.derivedDir).filter((n) => n.startsWith("eviction-summary-"))
    assert.isAtMost(summaries.length, 1, `${label}: a retried eviction rewrites the same summary`)
    if (found.base === 2) assert.strictEqual(summaries.length, 1, `${label}: the summary precedes the eviction`)
  }
}

describe("Fault sweep: cap rewrite", () => {
  it.effect(
    "every injected fault during a cap rewrite leaves acknowledged turns whole and a consistent log",
    () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const tally = yield* runLogSweep(spec, root)
        console.log(`cap rewrite sweep: ${JSON.stringify(tally)}`)
        assert.isAbove(tally.calls, 60)
        assert.isAbove(tally.complete, tally.faults / 3)
      }).pipe(Effect.provide(Layer.merge(faultyLayer(), quietLogs))),
    180_000
  )
})
