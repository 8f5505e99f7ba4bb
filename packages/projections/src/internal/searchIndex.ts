/**
 * The in-process inverted index of memory search (docs/search.md#index): one segment per session,
 * keyed by the signature of the file it was built from, with postings in typed arrays; corpus
 * statistics (N, total length, df) are kept incrementally, so idf and the average length are
 * computed at query time. Pure: the I/O that finds changed sessions lives in `MemorySearch`.
 *
 * Top-k without scoring every posting: each (segment, term) posting list carries its maximum term
 * frequency and minimum document length, which bound what any document of the segment can score.
 * Segments holding the rarest query term are scored first; every other segment is skipped when its
 * bound (times the largest recency multiplier it can get) cannot reach the current k-th score, and
 * a document's recency multiplier is computed only when its lexical score can still enter.
 * `scoreAll` is the plain reference: every posting of every query term, same formulas, same order.
 */
import {
  bm25Idf,
  bm25Term,
  compareRanked,
  keepsScore,
  MAX_RECENCY_MULTIPLIER,
  recencyMultiplier,
  tokenize
} from "@logbook/domain"

/** One document before indexing. */
export interface IndexDoc {
  /** Fact index (facts) or turn number (history). */
  readonly chunk: number
  /** Byte offset of the turn (history); 0 for facts. */
  readonly offset: number
  readonly createdAt: number | null
  readonly text: string
  /** What to show for a hit when the source is not re-read (history). */
  readonly snippet?: string | undefined
}

/**
 * A term's postings inside one segment: `[maxTf, minLength, doc0, tf0, doc1, tf1, …]`, documents
 * ascending.
 */
export type Postings = Int32Array

/** The indexed documents of one session. */
export interface Segment {
  readonly name: string
  /** Signature of the source file (size, mtime) when the segment was built. */
  readonly sig: string
  readonly chunks: Int32Array
  readonly offsets: Float64Array
  readonly lengths: Int32Array
  /** Unix seconds; NaN when the document has none. */
  readonly createdAt: Float64Array
  /** The largest recency-relevant timestamp of the segment (NaN when none). */
  readonly newest: number
  readonly snippets: ReadonlyArray<string> | undefined
  readonly terms: ReadonlyMap<string, Postings>
  /** Set when replaced or removed: lists may still point at it until they are compacted. */
  dead: boolean
}

/** Builds a segment from its documents (tokenising each). */
export const buildSegment = (name: string, sig: string, docs: ReadonlyArray<IndexDoc>): Segment => {
  const n = docs.length
  const chunks = new Int32Array(n)
  const offsets = new Float64Array(n)
  const lengths = new Int32Array(n)
  const createdAt = new Float64Array(n)
  const lists = new Map<string, Array<number>>()
  let newest = Number.NaN
  for (let d = 0; d < n; d++) {
    const doc = docs[d]
    if (doc === undefined) continue
    chunks[d] = doc.chunk
    offsets[d] = doc.offset
    createdAt[d] = doc.createdAt ?? Number.NaN
    if (doc.createdAt !== null && !(doc.createdAt <= newest)) newest = doc.createdAt
    const tokens = tokenize(doc.text)
    lengths[d] = tokens.length
    const tf = new Map<string, number>()
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1)
    for (const [t, f] of tf) {
      let list = lists.get(t)
      if (list === undefined) lists.set(t, list = [])
      list.push(d, f)
    }
  }
  const terms = new Map<string, Postings>()
  for (const [t, list] of lists) terms.set(t, packPostings(list, lengths))
  const snippets = docs.some((d) => d.snippet !== undefined) ? docs.map((d) => d.snippet ?? "") : undefined
  return { name, sig, chunks, offsets, lengths, createdAt, newest, snippets, terms, dead: false }
}

/** Packs `[doc, tf, …]` with its bounds header. */
export const packPostings = (list: ReadonlyArray<number>, lengths: Int32Array): Postings => {
  const out = new Int32Array(list.length + 2)
  let maxTf = 0
  let minLen = 0x7fffffff
  for (let i = 0; i < list.length; i += 2) {
    const d = list[i] ?? 0
    const f = list[i + 1] ?? 0
    out[i + 2] = d
    out[i + 3] = f
    if (f > maxTf) maxTf = f
    const len = lengths[d] ?? 0
    if (len < minLen) minLen = len
  }
  out[0] = maxTf
  out[1] = minLen
  return out
}

/** One ranked document. */
export interface Hit {
  readonly segment: Segment
  readonly doc: number
  readonly chunkId: string
  readonly score: number
}

/** Options of a query. */
export interface QueryOptions {
  readonly maxResults: number
  readonly minScore: number
  /** Unix seconds for the recency multiplier. */
  readonly now: number
}

interface Stats {
  readonly n: number
  readonly avgdl: number
  readonly idf: ReadonlyArray<number>
}

/** The index: live segments by session name, and the corpus statistics. */
export class SearchIndex {
  readonly segments = new Map<string, Segment>()
  private readonly df = new Map<string, number>()
  private readonly lists = new Map<string, Array<Segment>>()
  private docs = 0
  private totalLength = 0

  /** Number of documents. */
  get size(): number {
    return this.docs
  }

  /** Adds a segment, replacing the session's previous one. */
  put(segment: Segment): void {
    this.remove(segment.name)
    this.segments.set(segment.name, segment)
    this.docs += segment.lengths.length
    for (const len of segment.lengths) this.totalLength += len
    for (const [t, postings] of segment.terms) {
      this.df.set(t, (this.df.get(t) ?? 0) + (postings.length - 2) / 2)
      let list = this.lists.get(t)
      if (list === undefined) this.lists.set(t, list = [])
      list.push(segment)
    }
  }

  /** Removes a session's segment (if any). */
  remove(name: string): void {
    const old = this.segments.get(name)
    if (old === undefined) return
    this.segments.delete(name)
    old.dead = true
    this.docs -= old.lengths.length
    for (const len of old.lengths) this.totalLength -= len
    for (const [t, postings] of old.terms) {
      const left = (this.df.get(t) ?? 0) - (postings.length - 2) / 2
      if (left > 0) this.df.set(t, left)
      else {
        this.df.delete(t)
        this.lists.delete(t)
      }
    }
  }

  private stats(tokens: ReadonlyArray<string>): Stats {
    const n = this.docs
    return {
      n,
      avgdl: n === 0 ? 0 : this.totalLength / n,
      idf: tokens.map((t) => bm25Idf(n, this.df.get(t) ?? 0))
    }
  }

  /** The live segments holding `term` (dead entries are compacted away on the way). */
  private segmentsOf(term: string): ReadonlyArray<Segment> {
    const list = this.lists.get(term)
    if (list === undefined) return []
    let w = 0
    for (const s of list) if (!s.dead) list[w++] = s
    list.length = w
    return list
  }

  /** Ranked search of `query` with pruning (identical results to {@link scoreAll}). */
  search(query: string, options: QueryOptions): Array<Hit> {
    const tokens = tokenize(query)
    if (tokens.length === 0 || this.docs === 0 || options.maxResults <= 0) return []
    const st = this.stats(tokens)
    const unique = [...new Set(tokens)].filter((t) => this.df.has(t))
    if (unique.length === 0) return []
    // The rarest term first: its segments are likely to hold the best documents.
    unique.sort((a, b) => (this.df.get(a) ?? 0) - (this.df.get(b) ?? 0))
    const top = new TopK(options.maxResults, options.minScore)
    const seen = new Set<Segment>()
    const scratch: Scratch = { score: new Float64Array(0) }
    for (let pass = 0; pass < unique.length; pass++) {
      const term = unique[pass]
      if (term === undefined) continue
      for (const segment of this.segmentsOf(term)) {
        if (seen.has(segment)) continue
        seen.add(segment)
        const bound = segmentBound(segment, tokens, st) * (Number.isNaN(segment.newest)
          ? 1
          : recencyMultiplier(segment.newest, options.now)) *
          (1 + 1e-9)
        if (!top.admits(bound)) continue
        scoreSegment(segment, tokens, st, options.now, top, scratch, true)
      }
    }
    return top.sorted()
  }

  /** The plain reference: every document of every segment holding a query term scored in full. */
  scoreAll(query: string, options: QueryOptions): Array<Hit> {
    const tokens = tokenize(query)
    if (tokens.length === 0 || this.docs === 0 || options.maxResults <= 0) return []
    const st = this.stats(tokens)
    const top = new TopK(options.maxResults, options.minScore)
    const scratch: Scratch = { score: new Float64Array(0) }
    const seen = new Set<Segment>()
    for (const t of new Set(tokens)) {
      for (const segment of this.segmentsOf(t)) {
        if (seen.has(segment)) continue
        seen.add(segment)
        scoreSegment(segment, tokens, st, options.now, top, scratch, false)
      }
    }
    return top.sorted()
  }
}

/** An upper bound of any document's lexical score in `segment`. */
const segmentBound = (segment: Segment, tokens: ReadonlyArray<string>, st: Stats): number => {
  let bound = 0
  for (let q = 0; q < tokens.length; q++) {
    const postings = segment.terms.get(tokens[q] ?? "")
    if (postings === undefined) continue
    bound += bm25Term(st.idf[q] ?? 0, postings[0] ?? 0, postings[1] ?? 0, st.avgdl)
  }
  return bound
}

interface Scratch {
  score: Float64Array
}

/**
 * Scores every document of `segment` holding a query token: for each query token in query order
 * (duplicates again), `score += bm25Term(…)`, then the recency multiplier — skipped (when
 * `prune`) if even the largest multiplier cannot lift the document into the top k.
 */
const scoreSegment = (
  segment: Segment,
  tokens: ReadonlyArray<string>,
  st: Stats,
  now: number,
  top: TopK,
  scratch: Scratch,
  prune: boolean
): void => {
  const n = segment.lengths.length
  if (scratch.score.length < n) {
    scratch.score = new Float64Array(n)
  }
  const score = scratch.score
  score.fill(0, 0, n)
  const touched = new Uint8Array(n)
  for (let q = 0; q < tokens.length; q++) {
    const postings = segment.terms.get(tokens[q] ?? "")
    if (postings === undefined) continue
    const idf = st.idf[q] ?? 0
    for (let i = 2; i < postings.length; i += 2) {
      const d = postings[i] ?? 0
      touched[d] = 1
      score[d] = (score[d] ?? 0) + bm25Term(idf, postings[i + 1] ?? 0, segment.lengths[d] ?? 0, st.avgdl)
    }
  }
  for (let d = 0; d < n; d++) {
    if (touched[d] === 0) continue
    const lexical = score[d] ?? 0
    if (prune && !top.admits(lexical * MAX_RECENCY_MULTIPLIER * (1 + 1e-9))) continue
    const created = segment.createdAt[d] ?? Number.NaN
    const final = lexical * recencyMultiplier(Number.isNaN(created) ? null : created, now)
    top.offer(segment, d, final)
  }
}

/** The k best hits so far (score descending, chunk id ascending). */
class TopK {
  private readonly hits: Array<Hit> = []
  private readonly k: number
  private readonly minScore: number
  constructor(k: number, minScore: number) {
    this.k = k
    this.minScore = minScore
  }

  /** Whether a document scoring at most `bound` could still be kept (ties may enter by chunk id). */
  admits(bound: number): boolean {
    if (!(bound > 0) || bound < this.minScore) return false
    const last = this.hits.length < this.k ? undefined : this.hits[this.hits.length - 1]
    return last === undefined || bound >= last.score
  }

  offer(segment: Segment, doc: number, score: number): void {
    if (!keepsScore(score, this.minScore)) return
    const hit: Hit = { segment, doc, chunkId: `${segment.name}:${segment.chunks[doc] ?? 0}`, score }
    const hits = this.hits
    if (hits.length >= this.k) {
      const last = hits[hits.length - 1]
      if (last !== undefined && compareRanked(hit, last) >= 0) return
    }
    let i = hits.length
    while (i > 0) {
      const prev = hits[i - 1]
      if (prev === undefined || compareRanked(prev, hit) <= 0) break
      i--
    }
    hits.splice(i, 0, hit)
    if (hits.length > this.k) hits.pop()
  }

  sorted(): Array<Hit> {
    return [...this.hits]
  }
}
