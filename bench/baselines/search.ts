/**
 * P6 baseline: a plain hand-written inverted index — one global posting list per term (typed
 * arrays of document ids and term frequencies), every posting of every query term scored into a
 * dense accumulator with the same BM25 and recency formulas, then a bounded top-k selection.
 * No pruning, no per-session grouping: what a careful first implementation does.
 */
import { bm25Idf, bm25Term, compareRanked, keepsScore, recencyMultiplier, tokenize } from "@logbook/domain"

/** One fact document of the corpus. */
export interface BaselineDoc {
  readonly chunkId: string
  readonly text: string
  readonly createdAt: number | null
}

/** A built baseline index. */
export interface PlainIndex {
  readonly search: (query: string, k: number, now: number) => Array<{ chunkId: string; score: number }>
}

/** Builds the plain index over `docs`. */
export const buildPlainIndex = (docs: ReadonlyArray<BaselineDoc>): PlainIndex => {
  const n = docs.length
  const lengths = new Int32Array(n)
  const created = new Float64Array(n)
  const lists = new Map<string, Array<number>>()
  let total = 0
  docs.forEach((doc, d) => {
    const tokens = tokenize(doc.text)
    lengths[d] = tokens.length
    total += tokens.length
    created[d] = doc.createdAt ?? Number.NaN
    const tf = new Map<string, number>()
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1)
    for (const [t, f] of tf) {
      let list = lists.get(t)
      if (list === undefined) lists.set(t, list = [])
      list.push(d, f)
    }
  })
  const postings = new Map<string, { docs: Int32Array; tfs: Int32Array }>()
  for (const [t, list] of lists) {
    const ds = new Int32Array(list.length / 2)
    const fs = new Int32Array(list.length / 2)
    for (let i = 0; i < ds.length; i++) {
      ds[i] = list[2 * i] ?? 0
      fs[i] = list[2 * i + 1] ?? 0
    }
    postings.set(t, { docs: ds, tfs: fs })
  }
  const avgdl = n === 0 ? 0 : total / n
  const acc = new Float64Array(n)
  const seen = new Uint8Array(n)
  return {
    search: (query, k, now) => {
      const tokens = tokenize(query)
      const touched: Array<number> = []
      for (const q of tokens) {
        const p = postings.get(q)
        if (p === undefined) continue
        const idf = bm25Idf(n, p.docs.length)
        for (let i = 0; i < p.docs.length; i++) {
          const d = p.docs[i] ?? 0
          if (seen[d] === 0) {
            seen[d] = 1
            touched.push(d)
          }
          acc[d] = (acc[d] ?? 0) + bm25Term(idf, p.tfs[i] ?? 0, lengths[d] ?? 0, avgdl)
        }
      }
      // A bounded top-k selection (insertion into a sorted array of k), not a sort of every match.
      const top: Array<{ chunkId: string; score: number }> = []
      for (const d of touched) {
        const c = created[d] ?? Number.NaN
        const score = (acc[d] ?? 0) * recencyMultiplier(Number.isNaN(c) ? null : c, now)
        acc[d] = 0
        seen[d] = 0
        if (!keepsScore(score, 0)) continue
        const last = top[top.length - 1]
        if (top.length >= k && last !== undefined && score < last.score) continue
        const hit = { chunkId: docs[d]?.chunkId ?? "", score }
        if (top.length >= k && last !== undefined && compareRanked(hit, last) >= 0) continue
        let i = top.length
        while (i > 0 && compareRanked(top[i - 1] ?? hit, hit) > 0) i--
        top.splice(i, 0, hit)
        if (top.length > k) top.pop()
      }
      return top
    }
  }
}
