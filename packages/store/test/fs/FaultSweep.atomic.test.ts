/**
 * Fault sweep over the atomic private write (docs/format.md#permissions, docs/testing.md) as the store uses it on a
 * session: replacing `manifest.json`, replacing `index/turns.json`, and creating the cap-rewrite
 * marker. Every call fails with ENOSPC, EIO and EACCES, every call starts a power loss, every
 * write is torn (then carrying on, killed, or losing power). After each: the error is a typed
 * value; the file holds exactly the old or exactly the new content (never a mix, never empty),
 * mode 0600; a surviving process leaves no temp file; and a reopen finds the session consistent
 * with every event present once.
 */
import { assert, describe, it } from "@effect/vitest"
import { decodeTurnIndexText, encodeTurnIndex } from "@logbook/domain"
import { Effect, Exit, Layer, Result } from "effect"
import * as fs from "node:fs"
import { FaultController, SessionFs } from "../../src/fs/SessionFs.ts"
import type { SessionPaths } from "../../src/log/SessionPaths.ts"
import {
  checkAdoptable,
  checkLog,
  emptyHistory,
  seqMessage,
  startTurn,
  turnCompleted
} from "../fixtures/crashSuiteChecks.ts"
import {
  assertTypedFailure,
  describeFault,
  healed,
  injecting,
  quietLogs,
  survives,
  sweepFaults,
  tempFilesIn
} from "../fixtures/crashSuiteSweep.ts"
import { copyDir, faultyLayer, openLog, pathsOf, testRoot } from "../fixtures/eventlogHelpers.ts"

const TS = "2026-01-01T00:00:00.000Z"

interface Target {
  readonly name: string
  readonly path: (paths: SessionPaths) => string
  /** The new content, from the old one (undefined when the file does not exist yet). */
  readonly next: (old: string | undefined) => string
}

const targets: ReadonlyArray<Target> = [
  {
    name: "manifest.json",
    path: (p) => p.manifest,
    next: (old) => (old ?? "").replace(/"updated_at":"[^"]*"/, "\"updated_at\":\"2026-02-02T00:00:00.000+00:00\"")
  },
  {
    // Turn 2 carries no recorded timestamp, so its `ts` may change without contradicting the log.
    name: "index/turns.json",
    path: (p) => p.turns,
    next: (old) => {
      const decoded = decodeTurnIndexText(old ?? "")
      if (Result.isFailure(decoded)) throw new Error(`template index does not decode: ${decoded.failure.message}`)
      return encodeTurnIndex(
        decoded.success.map((e) => e.turn_number === 2 ? { ...e, ts: "2026-03-03T00:00:00.000+00:00" } : e)
      )
    }
  },
  {
    // A marker that matches no file length: the next open removes it.
    name: "index/pending-cap-rewrite.json (created)",
    path: (p) => p.marker,
    next: () => "{\"previous_file_len\":999999,\"new_file_len\":1,\"retained_turn_base\":1}"
  }
]

const acked = new Map([[1, 1], [2, 1], [3, 2]])

describe("Fault sweep: atomic write", () => {
  for (const target of targets) {
    it.effect(`${target.name}: old or new content, whole, whatever fails`, () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const sfs = yield* SessionFs
        const ctl = yield* FaultController
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "template")
          for (const e of [startTurn(1, TS), seqMessage(1, 1), seqMessage(2), turnCompleted]) yield* log.append(e)
          for (const e of [startTurn(2), seqMessage(3, 2), turnCompleted]) yield* log.append(e)
        }))
        const template = pathsOf(root, "template")
        const file = target.path(template)
        const old = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined
        const next = target.next(old)
        assert.notStrictEqual(next, old)
        copyDir(template.dir, pathsOf(root, "clean").dir)
        yield* ctl.reset
        yield* sfs.writeAtomic(target.path(pathsOf(root, "clean")), next)
        const trace = yield* ctl.trace
        const faults = sweepFaults(trace, [1, 10, 100_000])
        const outcomes: Record<string, number> = {}
        for (const [n, fault] of faults.entries()) {
          const id = `f${n}`
          const label = `${target.name}: ${describeFault(fault)}`
          const paths = pathsOf(root, id)
          copyDir(template.dir, paths.dir)
          const { exit, fired } = yield* injecting(fault, sfs.writeAtomic(target.path(paths), next))
          yield* healed
          assert.isTrue(fired, `${label}: the fault fired`)
          const typed = assertTypedFailure(exit, ["StoreIoError"], label)
          if (fault.kind === "fail" && typed !== undefined) assert.strictEqual(typed.code, fault.code, label)
          const now = fs.existsSync(target.path(paths)) ? fs.readFileSync(target.path(paths), "utf8") : undefined
          assert.include([old, next], now, `${label}: old or new content, nothing else`)
          if (now !== undefined) assert.strictEqual(fs.statSync(target.path(paths)).mode & 0o777, 0o600, label)
          if (Exit.isSuccess(exit)) assert.strictEqual(now, next, `${label}: success means the new content`)
          if (survives(fault)) assert.deepStrictEqual(tempFilesIn(paths.dir), [], `${label}: no temp file left`)
          const key = `${Exit.isSuccess(exit) ? "ok" : "failed"}, ${now === next ? "new" : "old"}`
          outcomes[key] = (outcomes[key] ?? 0) + 1
          checkAdoptable(paths, label)
          yield* Effect.scoped(Effect.flatMap(openLog(root, id), (log) => log.turnIndex))
          const found = checkLog(paths, { ...emptyHistory, acked }, label)
          assert.deepStrictEqual(found.seqs, [1, 2, 3], `${label}: every event once`)
          fs.rmSync(paths.dir, { recursive: true, force: true })
        }
        console.log(
          `atomic write of ${target.name}: ${trace.length} calls, ${faults.length} faults, ${JSON.stringify(outcomes)}`
        )
        assert.isAtLeast(trace.filter((op) => op === "rename").length, 1)
      }).pipe(Effect.provide(Layer.merge(faultyLayer(), quietLogs))))
  }
})
