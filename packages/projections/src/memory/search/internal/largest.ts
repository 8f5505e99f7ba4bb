/**
 * The k largest of a stream of numbers, kept in a min-heap of size k: what a ranking needs to
 * know the score a candidate must beat to reach the top k (both the in-memory and the on-disk
 * index skip work below it).
 */

/** A min-heap of the `k` largest values offered so far. */
export interface Largest {
  readonly offer: (v: number) => void
  /** How many values are held (at most k). */
  readonly size: () => number
  /** The smallest of the values held: the k-th largest once `size() === k`; 0 when empty. */
  readonly min: () => number
}

/** An empty {@link Largest} of capacity `k` (k ≥ 1). */
export const makeLargest = (k: number): Largest => {
  const heap = new Float64Array(k)
  let size = 0
  const offer = (v: number) => {
    if (size < k) {
      let c = size++
      heap[c] = v
      while (c > 0) {
        const parent = (c - 1) >> 1
        if ((heap[parent] ?? 0) <= (heap[c] ?? 0)) break
        const tmp = heap[parent] ?? 0
        heap[parent] = heap[c] ?? 0
        heap[c] = tmp
        c = parent
      }
    } else if (v > (heap[0] ?? 0)) {
      heap[0] = v
      let c = 0
      for (;;) {
        const l = 2 * c + 1
        const r = l + 1
        let m = c
        if (l < k && (heap[l] ?? 0) < (heap[m] ?? 0)) m = l
        if (r < k && (heap[r] ?? 0) < (heap[m] ?? 0)) m = r
        if (m === c) break
        const tmp = heap[m] ?? 0
        heap[m] = heap[c] ?? 0
        heap[c] = tmp
        c = m
      }
    }
  }
  return { offer, size: () => size, min: () => (size === 0 ? 0 : heap[0] ?? 0) }
}
