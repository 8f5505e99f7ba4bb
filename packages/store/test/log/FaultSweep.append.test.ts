/**
 * Fault sweep over append + flush (docs/testing.md): a workload with a turn-boundary barrier, a 64 KiB
 * buffer spill in the middle of a turn and an explicit flush runs once per injected fault —
 * every system call failing with ENOSPC, EIO and EACCES, every call starting a power loss, every
 * write torn (then carrying on, killed, or losing power). After each: errors are typed values;
 * a surviving handle's retried flush makes every appended event durable exactly once; and a
 * reopen finds every event acknowledged by a completed barrier, in order, once, in its turn, with
 * manifest and index equal to a fresh rescan and at most one (terminated) torn line.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import {
  checkAdoptable,
  checkLog,
  emptyHistory,
  seqMessage,
  startTurn,
  turnCompleted
} from "../fixtures/crashSuiteChecks.ts"
import type { LogSweepSpec } from "../fixtures/crashSuiteSweep.ts"
import { quietLogs, runLogSweep } from "../fixtures/crashSuiteSweep.ts"
import { editJson, faultyLayer, nodeLayer, openLog, pathsOf, testRoot } from "../fixtures/eventlogHelpers.ts"

const TS = "2026-01-01T00:00:00.000Z"

const spec: LogSweepSpec = {
  name: "append+flush",
  // Caps off: this sweep is about the barrier and the buffer; FaultSweep.cap covers rewrites.
  options: { maxEvents: 0, maxBytes: 0 },
  template: [
    { append: startTurn(1, TS) },
    { append: seqMessage(1, 1), seq: [1, 1] },
    { append: seqMessage(2), seq: [2, 1] },
    { append: turnCompleted }
  ],
  // Turn 2 closes with the barrier inside `append`; turn 3 spills a 70 KB message past the
  // 64 KiB buffer (bytes written, no metadata) and stays open until the explicit flush.
  workload: [
    { append: startTurn(2, TS) },
    { append: seqMessage(10, 2), seq: [10, 2] },
    { append: seqMessage(11), seq: [11, 2] },
    { append: turnCompleted },
    { append: startTurn(3) },
    { append: seqMessage(12, 3), seq: [12, 3] },
    { append: seqMessage(13, undefined, 70_000), seq: [13, 3] },
    { append: seqMessage(14), seq: [14, 3] },
    { flush: true }
  ],
  keeps: [1, 4_096, 1_000_000]
}

describe("Fault sweep: append + flush", () => {
  it.effect(
    "every injected fault leaves every acknowledged event exactly once and a consistent log",
    () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const tally = yield* runLogSweep(spec, root)
        console.log(`append+flush sweep: ${JSON.stringify(tally)}`)
        assert.isAbove(tally.calls, 30)
        assert.isAbove(tally.complete, tally.faults / 2)
      }).pipe(Effect.provide(Layer.merge(faultyLayer(), quietLogs))),
    120_000
  )
})

describe("The sweep's checker", () => {
  const acked = new Map([[1, 1], [2, 1], [3, 2], [4, 2]])
  const write = (root: string, id: string) =>
    Effect.scoped(Effect.gen(function*() {
      const log = yield* openLog(root, id)
      for (const e of [startTurn(1, TS), seqMessage(1, 1), seqMessage(2), turnCompleted]) yield* log.append(e)
      for (const e of [startTurn(2), seqMessage(3, 2), seqMessage(4), turnCompleted]) yield* log.append(e)
    }))
  /** Rewrites the log's lines through `edit`, then lets a reopen rescan and republish the metadata. */
  const damaged = (root: string, id: string, edit: (lines: Array<string>) => Array<string>) =>
    Effect.gen(function*() {
      yield* write(root, id)
      const paths = pathsOf(root, id)
      const lines = fs.readFileSync(paths.events, "utf8").split("\n").slice(0, -1)
      fs.writeFileSync(paths.events, edit(lines).map((l) => `${l}\n`).join(""))
      fs.rmSync(paths.manifest)
      yield* Effect.scoped(openLog(root, id))
      return paths
    })

  it.effect("accepts an intact log and rejects lost, duplicated, orphaned and repeatedly torn events", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* write(root, "intact")
      assert.deepStrictEqual(checkLog(pathsOf(root, "intact"), { ...emptyHistory, acked }, "intact").seqs, [1, 2, 3, 4])
      const cases: ReadonlyArray<readonly [string, (lines: Array<string>) => Array<string>, RegExp]> = [
        ["lost", (l) => l.filter((_, i) => i !== 2), /acknowledged events lost/],
        ["duplicated", (l) => [...l.slice(0, 3), l[2] ?? "", ...l.slice(3)], /strictly increase/],
        ["orphaned", (l) => l.filter((_, i) => i !== 4), /outside every turn/],
        ["renumbered", (l) => [l[4] ?? "", ...l], /turn label|has its own label/],
        ["torn twice", (l) => [...l.slice(0, 4), "{\"torn", ...l.slice(4), "{\"torn"], /at most one torn line/]
      ]
      for (const [name, edit, pattern] of cases) {
        const paths = yield* damaged(root, name.replace(" ", "-"), edit)
        assert.throws(() => checkLog(paths, { ...emptyHistory, acked }, name), pattern)
      }
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("rejects metadata a fast-path open would adopt when it does not describe the log", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* write(root, "adoptable")
      const paths = pathsOf(root, "adoptable")
      assert.isTrue(checkAdoptable(paths, "intact"))
      const manifest = fs.readFileSync(paths.manifest, "utf8")
      editJson(paths.manifest, (m) => ({ ...m, event_count: Number(m["event_count"]) + 1 }))
      assert.throws(() => checkAdoptable(paths, "counter"), /event_count/)
      fs.writeFileSync(paths.manifest, manifest)
      // Still valid and consistent (numbers, order, bounds), but turn 2 starts one line late.
      editJson(paths.turns, (index) => {
        const entries = index["entries"] as Array<Record<string, number>>
        const second = entries[1] ?? {}
        return { entries: [entries[0], { ...second, start_offset: Number(second["start_offset"]) + 1 }] }
      })
      assert.throws(() => checkAdoptable(paths, "index"), /turn index/)
      // A manifest that no longer matches the file length is never adopted, so it promises nothing.
      fs.appendFileSync(paths.events, "{\"torn")
      assert.isFalse(checkAdoptable(paths, "torn"))
    }).pipe(Effect.provide(nodeLayer())))
})
