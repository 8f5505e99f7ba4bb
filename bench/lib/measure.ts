/**
 * Round running and reporting shared by the benchmarks: warm-up, alternating rounds of the
 * Logbook side and the baseline side (ABBA order, so neither side always runs on a warmer
 * cache or heap), medians, and the number formats the report uses.
 */

/** Runs a full GC when the process was started with `--expose-gc` (the bench script does). */
export const collectGarbage = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc !== undefined) gc()
}

/** The median of a non-empty list. */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  const at = (i: number): number => sorted[i] ?? Number.NaN
  return sorted.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2
}

/** One round's measurements in milliseconds, by name (`total` is the one the ratio uses). */
export type Sample = { readonly total: number } & Readonly<Record<string, number>>

/** Medians of each named measurement over the measured rounds of one side. */
export type Medians = Readonly<Record<string, number>> & { readonly total: number }

const mediansOf = (samples: ReadonlyArray<Sample>): Medians => {
  const first = samples[0]
  if (first === undefined) throw new Error("no samples")
  const out: Record<string, number> = {}
  for (const key of Object.keys(first)) out[key] = median(samples.map((s) => s[key] ?? Number.NaN))
  return out as Medians
}

/** How many rounds to run. */
export interface Rounds {
  readonly warmup: number
  readonly rounds: number
}

/**
 * Runs `warmup` unmeasured pairs, then `rounds` measured pairs alternating which side goes
 * first; each side measures itself (setup and cleanup stay outside its timer).
 */
export const alternate = async (
  plan: Rounds,
  logbook: (round: number) => Promise<Sample>,
  baseline: (round: number) => Promise<Sample>
): Promise<{ readonly logbook: Medians; readonly baseline: Medians }> => {
  const a: Array<Sample> = []
  const b: Array<Sample> = []
  for (let i = 0; i < plan.warmup + plan.rounds; i++) {
    const first = i % 2 === 0 ? logbook : baseline
    const second = i % 2 === 0 ? baseline : logbook
    collectGarbage()
    const x = await first(i)
    collectGarbage()
    const y = await second(i)
    if (i < plan.warmup) continue
    if (i % 2 === 0) {
      a.push(x)
      b.push(y)
    } else {
      a.push(y)
      b.push(x)
    }
  }
  return { logbook: mediansOf(a), baseline: mediansOf(b) }
}

/** Milliseconds with one decimal. */
export const ms = (value: number): string => `${value.toFixed(1)} ms`

/** A rate with a k/M suffix. */
export const rate = (count: number, millis: number, unit: string): string => {
  const perSecond = count / (millis / 1000)
  if (perSecond >= 1e6) return `${(perSecond / 1e6).toFixed(2)} M${unit}/s`
  if (perSecond >= 1e3) return `${(perSecond / 1e3).toFixed(1)} k${unit}/s`
  return `${perSecond.toFixed(1)} ${unit}/s`
}

/** Bytes per second in MB/s (10^6). */
export const mbps = (bytes: number, millis: number): string => `${(bytes / 1e6 / (millis / 1000)).toFixed(1)} MB/s`

/** A byte size for labels (MB = 10^6 bytes, as the goals in README.md#performance are stated). */
export const size = (bytes: number): string =>
  bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${bytes} B`

/** Progress and notes go to stderr so stdout stays the report. */
export const note = (text: string): void => {
  process.stderr.write(`${text}\n`)
}

/** One benchmark's outcome: the value printed on its final `P<n>: …` line and whether it meets its goal. */
export interface Outcome {
  readonly id: string
  readonly value: number
  /** Printed value (ratio with two decimals, or MB as an integer). */
  readonly text: string
  readonly goal: string
  readonly met: boolean
}
