/**
 * The short crash loop (docs/testing.md), the CI-sized run of `npm run test:crash`: child writers
 * append seeded turns — without caps, and with a small `maxEvents` so cap rewrites run on nearly
 * every turn — and are SIGKILLed at seeded random instants: while opening (recovering from the
 * previous kill), after some acknowledged barriers, or just after a cap rewrite began. After every
 * kill a copy of the session is reopened and checked (crashSuiteChecks.checkLog): every event
 * acknowledged by a completed barrier present exactly once, in order and in its turn (unless
 * its whole turn was evicted), no phantom or duplicated turn, index and manifest equal to an
 * independent rescan, at most one torn line per kill and terminated. The next child continues on
 * the damaged original, so recovery itself is killed too.
 *
 * `LOGBOOK_CRASH_ITERATIONS` and `LOGBOOK_CRASH_SEED` select a longer or different run.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as os from "node:os"
import { runCrashSuite } from "../fixtures/crashSuite.ts"

const ITERATIONS = Number(process.env["LOGBOOK_CRASH_ITERATIONS"] ?? 24)
const SEED = Number(process.env["LOGBOOK_CRASH_SEED"] ?? 20261003)

describe("EventLog crash loop", () => {
  it.live(
    `writers SIGKILLed at ${ITERATIONS} seeded instants, with and without cap rewrites, lose no acknowledged event`,
    () =>
      Effect.gen(function*() {
        const result = yield* runCrashSuite({
          iterations: ITERATIONS,
          seed: SEED,
          jobs: 2,
          segmentSize: Math.ceil(ITERATIONS / 4),
          mix: { append: 1, cap: 1, retention: 0 },
          tmp: os.tmpdir(),
          log: () => undefined
        })
        assert.deepStrictEqual(result.failures.map((f) => `${f.label}: ${f.error}`), [])
        assert.strictEqual(result.passed, ITERATIONS)
        const stat = (key: string) => result.stats[key] ?? 0
        // The kills landed where they matter, and the writers made progress between them.
        assert.isAtLeast(stat("append: kill-after-ack") + stat("cap: kill-after-ack"), ITERATIONS / 4)
        assert.isAtLeast(stat("append: kill-after-opening") + stat("cap: kill-after-opening"), 1)
        assert.isAtLeast(stat("cap: kill-after-rewrite"), 1)
        assert.isAtLeast(stat("cap: evicted"), 1)
      }),
    { timeout: 600_000 }
  )
})
