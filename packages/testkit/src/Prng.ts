/**
 * The seeded pseudo-random generator every randomised test, fuzzer, crash loop and benchmark
 * uses, so a run replays exactly from its seed on any machine.
 */

/** A deterministic source of numbers in [0, 1) and the few helpers built on it. */
export interface Prng {
  /** The next number in [0, 1). */
  readonly next: () => number
  /** An integer in [lo, hi], both inclusive. */
  readonly int: (lo: number, hi: number) => number
  /** True with probability `p`. */
  readonly chance: (p: number) => boolean
  /** One element of a non-empty array; throws on an empty one (a bug in the test). */
  readonly pick: <A>(items: ReadonlyArray<A>) => A
}

/**
 * Mulberry32 seeded with `seed` (any number; its low 32 bits are used). Tiny and fast, with a
 * full 2^32 period — plenty for test data, never for anything secret.
 */
export const mulberry32 = (seed: number): Prng => {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1))
  const pick = <A>(items: ReadonlyArray<A>): A => {
    const item = items[int(0, items.length - 1)]
    if (item === undefined) throw new Error("pick from an empty array")
    return item
  }
  return { next, int, chance: (p) => next() < p, pick }
}
