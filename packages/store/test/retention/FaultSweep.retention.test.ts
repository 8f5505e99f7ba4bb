/**
 * Fault sweep over retention removal (docs/log.md#retention, docs/testing.md): a root with sessions to keep (two
 * recent, one pinned), old completed and abandoned sessions to remove (each with links pointing
 * outside the root) and a link in the root itself. `Retention.apply` runs once per injected
 * fault — every call failing with ENOSPC, EIO and EACCES, every call starting a power loss, every
 * write torn (then carrying on, killed, or losing power). After each: any error is a typed value;
 * every session is listed whole or not at all; nothing outside the root changed; and the next
 * clean run removes exactly the removable sessions and empties the trash.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import { FaultController, SessionFs } from "../../src/fs/SessionFs.ts"
import { Retention } from "../../src/retention/Retention.ts"
import {
  buildTemplates,
  checkRetentionCrashed,
  checkRetentionRecovered,
  populateRoot,
  RETENTION_POLICY,
  retentionWorkspace
} from "../fixtures/crashSuiteRetention.ts"
import {
  assertTypedFailure,
  describeFault,
  healed,
  injecting,
  quietLogs,
  sweepFaults
} from "../fixtures/crashSuiteSweep.ts"
import { testRoot } from "../fixtures/eventlogHelpers.ts"

const layer = Layer.mergeAll(Retention.layer.pipe(Layer.provideMerge(SessionFs.layerFaulty())), quietLogs)

describe("Fault sweep: retention removal", () => {
  it.effect(
    "whatever fails, every session is whole or gone, the outside untouched, and the next run finishes",
    () =>
      Effect.gen(function*() {
        const { base } = yield* testRoot
        const retention = yield* Retention
        const ctl = yield* FaultController
        const nowMs = Date.UTC(2026, 9, 3)
        yield* TestClock.setTime(nowMs)
        const templates = yield* buildTemplates(base)
        const { root, outside } = retentionWorkspace(base)
        const populate = () => populateRoot(root, outside, templates, { doomed: 1, abandoned: 1, bulkFiles: 3, nowMs })
        populate()
        yield* ctl.reset
        const clean = yield* retention.apply(root, RETENTION_POLICY)
        assert.deepStrictEqual(clean.marked, ["abandoned-0"])
        assert.strictEqual(clean.removed.length, 2)
        const trace = yield* ctl.trace
        const faults = sweepFaults(trace, [1, 10, 100_000])
        const tags: Record<string, number> = {}
        for (const fault of faults) {
          const label = `retention: ${describeFault(fault)}`
          const expected = populate()
          const { exit, fired } = yield* injecting(fault, retention.apply(root, RETENTION_POLICY))
          yield* healed
          assert.isTrue(fired, `${label}: the fault fired`)
          assertTypedFailure(exit, ["StoreIoError", "CreateDirError"], label)
          const where = [...checkRetentionCrashed(root, expected, label), Exit.isSuccess(exit) ? "ok" : "failed"]
          for (const tag of where) tags[tag] = (tags[tag] ?? 0) + 1
          yield* retention.apply(root, RETENTION_POLICY)
          checkRetentionRecovered(root, expected, templates.history, label)
        }
        console.log(`retention sweep: ${trace.length} calls, ${faults.length} faults, ${JSON.stringify(tags)}`)
        assert.isAbove(tags["killed-mid-removal"] ?? 0, 0)
        assert.isTrue(fs.existsSync(outside))
      }).pipe(Effect.provide(layer)),
    120_000
  )
})
