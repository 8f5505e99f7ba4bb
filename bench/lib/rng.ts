/**
 * A small seeded pseudo-random generator (mulberry32) so every benchmark data set is the
 * same bytes on every run and machine: ratios stay comparable between runs.
 */

/** A deterministic source of numbers in [0, 1) plus the helpers the generators need. */
export interface Rng {
  readonly next: () => number
  /** An integer in [min, max]. */
  readonly int: (min: number, max: number) => number
  readonly pick: <A>(values: ReadonlyArray<A>) => A
}

/** Creates a generator from a 32-bit seed. */
export const makeRng = (seed: number): Rng => {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1))
  const pick = <A>(values: ReadonlyArray<A>): A => {
    const value = values[Math.floor(next() * values.length)]
    if (value === undefined) throw new Error("pick from an empty list")
    return value
  }
  return { next, int, pick }
}
