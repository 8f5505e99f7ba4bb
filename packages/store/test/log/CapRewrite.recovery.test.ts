/**
 * The crash windows of a cap rewrite one by one (docs/log.md#cap-eviction "Crash windows", docs/log.md#open marker
 * handling, docs/log.md#index-validity turn-base inference, docs/differences.md#turn-base): a power loss just before each rename of
 * the rewrite, a reference-format marker, a garbage marker, and a rewrite whose marker and new
 * metadata were both lost.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodePendingCapRewrite } from "@logbook/domain"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { FaultController } from "../../src/fs/SessionFs.ts"
import * as EventLog from "../../src/log/EventLog.ts"
import type { SessionLog } from "../../src/log/EventLog.ts"
import type { SummaryHook } from "../../src/log/SummaryHook.ts"
import {
  assertSessionConsistent,
  defined,
  faultyStoreLayer,
  fileEvents,
  labelledTurn,
  labelOf,
  matrixUpdated,
  recordingHook,
  storeLayer,
  tempRoot
} from "../fixtures/capTestkit.ts"

const MAX_EVENTS = 12

/**
 * m1..m3 before any turn, turns 1 and 2 of 3 events, turn 3 of 4: its completion is the 13th
 * event, over the cap of 12 at a turn boundary; evicting turn 1 with the prelude reaches 10.
 */
const prelude: ReadonlyArray<ThreadEvent> = [matrixUpdated("m1", 1), matrixUpdated("m2", 2), matrixUpdated("m3", 3)]
const turnEvents = (label: number) => labelledTurn(label, label === 3 ? 2 : 1)

/** Checks a reopened session: consistent with a rescan, labels equal numbers, turns intact, snapshots kept. */
const checkRecovered = (log: SessionLog, where: string, markerLeft = false) =>
  Effect.gen(function*() {
    const manifest = yield* assertSessionConsistent(log, where)
    assert.strictEqual(fs.existsSync(log.paths.marker), markerLeft, `${where}: marker left`)
    for (const entry of yield* log.turnIndex) {
      const turn = yield* log.reconstructTurn(entry.turn_number)
      assert.strictEqual(labelOf(turn.events), entry.turn_number, `${where}: turn ${entry.turn_number} numbering`)
      assert.deepStrictEqual(turn.events, turnEvents(entry.turn_number), `${where}: turn ${entry.turn_number}`)
    }
    const ids = fileEvents(log.paths.events).flatMap((e) => e.type === "matrix.updated" ? [e.spec.id] : [])
    assert.deepStrictEqual([...ids].sort(), ["m1", "m2", "m3"], `${where}: one snapshot per matrix`)
    return manifest
  })

/** Builds the session up to the trigger, fails the `renameIndex`-th rename of the trigger append, loses power. */
const crashAtRename = (renameIndex: number | "unlink") =>
  Effect.gen(function*() {
    const root = yield* tempRoot("cap-recover")
    const { hook } = recordingHook()
    const open = (summaryHook: SummaryHook) =>
      EventLog.open({ sessionsDir: root, sessionId: "r", maxEvents: MAX_EVENTS, maxBytes: 0, summaryHook })
    const trace = yield* Effect.scoped(Effect.gen(function*() {
      const ctl = yield* FaultController
      const log = yield* open(hook)
      for (const e of prelude) yield* log.append(e)
      for (let label = 1; label <= 2; label++) for (const e of turnEvents(label)) yield* log.append(e)
      const last = turnEvents(3)
      for (const e of last.slice(0, -1)) yield* log.append(e)
      yield* ctl.reset
      yield* ctl.arm(
        renameIndex === "unlink"
          ? { _tag: "Fail", op: "unlink", call: 0, code: "EIO" }
          : { _tag: "Fail", op: "rename", call: renameIndex, code: "EIO" }
      )
      const exit = yield* Effect.exit(log.append(defined(last.at(-1), "the trigger")))
      assert.isTrue(Exit.isFailure(exit), "the armed call was reached")
      const ops = yield* ctl.trace
      yield* ctl.crash
      return ops
    }))
    const ctl = yield* FaultController
    yield* ctl.reset
    return { root, trace, open }
  }).pipe(Effect.provide(faultyStoreLayer()))

describe("CapRewrite crash windows", () => {
  it.effect("the trigger at a turn boundary renames: index, manifest, marker, log, index, manifest", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot("cap-recover-trace")
      const ctl = yield* FaultController
      const { hook, ranges } = recordingHook()
      const log = yield* EventLog.open({
        sessionsDir: root,
        sessionId: "t",
        maxEvents: MAX_EVENTS,
        maxBytes: 0,
        summaryHook: hook
      })
      for (const e of prelude) yield* log.append(e)
      for (let label = 1; label <= 2; label++) for (const e of turnEvents(label)) yield* log.append(e)
      const last = turnEvents(3)
      for (const e of last.slice(0, -1)) yield* log.append(e)
      yield* ctl.reset
      yield* log.append(defined(last.at(-1), "the trigger"))
      const ops = yield* ctl.trace
      // The indexes the window tests below rely on.
      assert.strictEqual(ops.filter((op) => op === "rename").length, 6)
      assert.strictEqual(ops.filter((op) => op === "unlink").length, 1)
      assert.deepStrictEqual(ranges.map((r) => [r.firstTurn, r.lastTurn]), [[1, 1]])
      const manifest = yield* checkRecovered(log, "clean")
      assert.strictEqual(manifest.retained_turn_base, 2)
    }).pipe(Effect.provide(faultyStoreLayer())))

  it.effect("power loss before the marker is written: the old log reopens whole", () =>
    Effect.gen(function*() {
      const { open, root } = yield* crashAtRename(2)
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* open(recordingHook().hook)
        const manifest = yield* checkRecovered(log, "before marker")
        assert.strictEqual(manifest.retained_turn_base, 1)
        assert.strictEqual(manifest.turn_count, 3)
      }))
      assert.isFalse(fs.existsSync(path.join(root, "r", "index", "pending-cap-rewrite.json")))
    }).pipe(Effect.provide(storeLayer)))

  it.effect("power loss after the marker, before the log is replaced: the stale marker is ignored", () =>
    Effect.gen(function*() {
      const { open, root } = yield* crashAtRename(3)
      const marker = path.join(root, "r", "index", "pending-cap-rewrite.json")
      assert.isTrue(fs.existsSync(marker), "the marker was left behind")
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* open(recordingHook().hook)
        const manifest = yield* checkRecovered(log, "marker only")
        assert.strictEqual(manifest.retained_turn_base, 1)
        assert.strictEqual(manifest.turn_count, 3)
      }))
    }).pipe(Effect.provide(storeLayer)))

  for (const [index, window] of [[4, "before the new index"], [5, "before the new manifest"]] as const) {
    it.effect(`power loss after the log was replaced, ${window}: the marker numbers the rescan`, () =>
      Effect.gen(function*() {
        const { open } = yield* crashAtRename(index)
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* open(recordingHook().hook)
          const manifest = yield* checkRecovered(log, window)
          assert.strictEqual(manifest.retained_turn_base, 2)
          assert.strictEqual(manifest.turn_count, 3)
          // m1..m3 came back as checkpoints and count as events.
          assert.strictEqual(manifest.event_count, 3 + 3 + 4)
        }))
      }).pipe(Effect.provide(storeLayer)))
  }

  it.effect("power loss before the marker is removed: the new state reopens as is", () =>
    Effect.gen(function*() {
      const { open } = yield* crashAtRename("unlink")
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* open(recordingHook().hook)
        const manifest = yield* checkRecovered(log, "before marker removal")
        assert.strictEqual(manifest.retained_turn_base, 2)
      }))
    }).pipe(Effect.provide(storeLayer)))

  it.effect("a reference marker without checkpoint_bytes still numbers the rescan", () =>
    Effect.gen(function*() {
      const { open, root } = yield* crashAtRename(4)
      const marker = path.join(root, "r", "index", "pending-cap-rewrite.json")
      const written = JSON.parse(fs.readFileSync(marker, "utf8"))
      assert.isAbove(written.checkpoint_bytes, 0, "our marker records the checkpoint prefix")
      fs.writeFileSync(
        marker,
        encodePendingCapRewrite({
          previous_file_len: written.previous_file_len,
          new_file_len: written.new_file_len,
          retained_turn_base: written.retained_turn_base
        })
      )
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* open(recordingHook().hook)
        const manifest = yield* checkRecovered(log, "reference marker")
        assert.strictEqual(manifest.retained_turn_base, 2)
      }))
    }).pipe(Effect.provide(storeLayer)))

  it.effect("an unparseable marker is ignored for recovery and removed by the open", () =>
    Effect.gen(function*() {
      const { open, root } = yield* crashAtRename(2)
      const marker = path.join(root, "r", "index", "pending-cap-rewrite.json")
      fs.writeFileSync(marker, "{\"previous_file_len\":")
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* open(recordingHook().hook)
        // The reference leaves such a marker behind forever; Logbook removes it on open.
        const manifest = yield* checkRecovered(log, "garbage marker")
        assert.strictEqual(manifest.retained_turn_base, 1)
        // The next rewrite writes and removes its own marker as usual.
        for (const e of turnEvents(4)) yield* log.append(e)
        const after = yield* checkRecovered(log, "after the next rewrite")
        assert.isAbove(after.retained_turn_base ?? 1, 1)
      }))
    }).pipe(Effect.provide(storeLayer)))

  // docs/differences.md#turn-base: the open measures the leading run of matrix checkpoints, so rule 2 of the
  // turn-base inference cuts exactly where the rewrite did.
  it.effect("a rewrite whose marker and new metadata were lost still numbers retained turns exactly", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot("cap-recover-nomarker")
      const dir = path.join(root, "nm")
      let old: { manifest: Buffer; index: Buffer } | undefined
      const hook: SummaryHook = () =>
        Effect.sync(() => {
          old = {
            manifest: fs.readFileSync(path.join(dir, "manifest.json")),
            index: fs.readFileSync(path.join(dir, "index", "turns.json"))
          }
        })
      const open = EventLog.open({
        sessionsDir: root,
        sessionId: "nm",
        maxEvents: MAX_EVENTS,
        maxBytes: 0,
        summaryHook: hook
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* open
        for (const e of prelude) yield* log.append(e)
        for (let label = 1; label <= 3; label++) for (const e of turnEvents(label)) yield* log.append(e)
        assert.strictEqual((yield* log.manifest).retained_turn_base, 2)
      }))
      // As if the process died after the replace with the marker lost (a reference store, or a
      // marker whose directory entry never reached the disk): old metadata, no marker.
      assert.isDefined(old)
      if (old === undefined) return
      fs.writeFileSync(path.join(dir, "manifest.json"), old.manifest)
      fs.writeFileSync(path.join(dir, "index", "turns.json"), old.index)
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* open
        const manifest = yield* checkRecovered(log, "marker lost")
        assert.strictEqual(manifest.retained_turn_base, 2)
      }))
    }).pipe(Effect.provide(storeLayer)))
})
