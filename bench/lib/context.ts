/**
 * What every benchmark receives: the temp root, the size profile (`--quick` or full), and the
 * large log shared by P3 and P5 (written once, on first use).
 */
import * as Path from "node:path"
import type { LogFixture } from "./fixtures.ts"
import { writeLogFixture } from "./fixtures.ts"
import { note, size } from "./measure.ts"

/** Sizes of one run; `--quick` shrinks them to finish in under a minute. */
export interface Profile {
  readonly quick: boolean
  readonly p1Events: number
  readonly p2Turns: number
  readonly p3SmallBytes: number
  readonly bigLogBytes: number
  readonly p4Bytes: number
  readonly warmup: number
  readonly rounds: number
  readonly p3Opens: number
}

/** Full sizes (README.md#performance) and the reduced `--quick` sizes. */
export const profileOf = (quick: boolean): Profile =>
  quick
    ? {
      quick,
      p1Events: 10_000,
      p2Turns: 10,
      p3SmallBytes: 1e6,
      bigLogBytes: 100e6,
      p4Bytes: 20e6,
      warmup: 1,
      rounds: 3,
      p3Opens: 5
    }
    : {
      quick,
      p1Events: 50_000,
      p2Turns: 40,
      p3SmallBytes: 1e6,
      bigLogBytes: 1e9,
      p4Bytes: 100e6,
      warmup: 1,
      rounds: 5,
      p3Opens: 9
    }

/** Shared state of one `npm run bench`. */
export interface BenchContext {
  readonly root: string
  readonly profile: Profile
  /** The large log of P3 and P5 (`bigLogBytes`), written on first use. */
  readonly bigLog: () => LogFixture
}

/** Builds the context; `root` is removed at exit by its creator. */
export const makeContext = (root: string, profile: Profile): BenchContext => {
  let big: LogFixture | undefined
  return {
    root,
    profile,
    bigLog: () => {
      if (big === undefined) {
        const t0 = performance.now()
        big = writeLogFixture(Path.join(root, "big"), "big-session", profile.bigLogBytes, 5)
        note(`  generated ${size(big.bytes)} (${big.turns} turns) in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      }
      return big
    }
  }
}
