/**
 * The in-process inverted index of memory search (docs/search.md#index). Sessions are the unit of
 * change: each is added as one group of documents keyed by the signature of the file it came from,
 * and replacing or removing a session tombstones its documents; the next query (or save) repacks
 * the postings — typed arrays, one contiguous range per term, documents ascending — dropping dead
 * documents and appending new ones, without re-reading any unchanged session. Corpus statistics
 * (N, average length, df) come from the packed arrays at query time.
 *
 * Top-k without scoring every posting of common words: query terms are taken rarest first (by
 * their score bound), and once the k-th best partial score beats the largest score the remaining
 * terms could give a document not seen yet (times the largest recency multiplier), those terms
 * only look up the documents already seen (binary search) instead of scanning their postings.
 * Each document's score is then summed in query order, exactly as a full scoring does, and the
 * recency multiplier is computed only for documents that can still enter the top k.
 * `scoreAll` is the plain reference: every posting of every query term.
 */
import {
  bm25Idf,
  bm25Term,
  compareRanked,
  keepsScore,
  MAX_RECENCY_MULTIPLIER,
  recencyMultiplier,
  termFrequencies,
  tokenize
} from "@logbook/domain"
import { makeLargest } from "./largest.ts"

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

/** A session's documents, tokenised, waiting to be packed. */
export interface SessionDocs {
  readonly name: string
  readonly sig: string
  readonly docs: ReadonlyArray<IndexDoc>
  readonly tfs: ReadonlyArray<ReadonlyMap<string, number>>
  readonly lengths: ReadonlyArray<number>
}

/** Tokenises a session's documents. */
export const sessionDocs = (name: string, sig: string, docs: ReadonlyArray<IndexDoc>): SessionDocs => {
  const tfs: Array<ReadonlyMap<string, number>> = []
  const lengths: Array<number> = []
  for (const doc of docs) {
    const { length, tf } = termFrequencies(doc.text)
    tfs.push(tf)
    lengths.push(length)
  }
  return { name, sig, docs, tfs, lengths }
}

/** The packed arrays (also what the snapshot stores). */
export interface Packed {
  readonly terms: ReadonlyArray<string>
  /** Postings of term t: `postings[termStart[t] .. termStart[t + 1])` as `doc, tf` pairs. */
  readonly termStart: Int32Array
  readonly postings: Int32Array
  readonly docSession: Int32Array
  readonly docChunk: Int32Array
  readonly docLength: Int32Array
  readonly docOffset: Float64Array
  /** Unix seconds; NaN when none. */
  readonly docCreated: Float64Array
  readonly docSnippet: ReadonlyArray<string> | undefined
  readonly sessionNames: ReadonlyArray<string>
  readonly sessionSigs: ReadonlyArray<string>
  /** Documents of session s: `[sessionStart[s], sessionStart[s + 1])`. */
  readonly sessionStart: Int32Array
  /** Per term: the largest tf and the shortest document length of its postings (score bounds). */
  readonly termMaxTf: Int32Array
  readonly termMinLen: Int32Array
}

/** An index with nothing in it. */
export const emptyPacked = (): Packed => ({
  terms: [],
  termStart: new Int32Array(1),
  postings: new Int32Array(0),
  docSession: new Int32Array(0),
  docChunk: new Int32Array(0),
  docLength: new Int32Array(0),
  docOffset: new Float64Array(0),
  docCreated: new Float64Array(0),
  docSnippet: undefined,
  sessionNames: [],
  sessionSigs: [],
  sessionStart: new Int32Array(1),
  termMaxTf: new Int32Array(0),
  termMinLen: new Int32Array(0)
})

/** One ranked document. */
export interface Hit {
  readonly session: string
  readonly chunk: number
  readonly offset: number
  readonly createdAt: number | null
  readonly snippet: string | undefined
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

const EPS = 1e-9

/** The index: packed sessions plus pending changes. */
export class SearchIndex {
  private packed: Packed
  private termIds: Map<string, number>
  private sessionIndex: Map<string, number>
  /** The packed state is what the snapshot on disk holds (set by whoever loads or saves it). */
  saved = false
  private readonly pending = new Map<string, SessionDocs>()
  private readonly removed = new Set<string>()
  // Candidate slot per document (-1: not a candidate), reset after every query.
  private slotOf = new Int32Array(0)
  private maxTf: Int32Array = new Int32Array(0)
  private minLen: Int32Array = new Int32Array(0)
  private totalLength = 0

  constructor(packed: Packed = emptyPacked()) {
    this.packed = packed
    this.termIds = new Map()
    this.sessionIndex = new Map()
    this.adopt(packed)
  }

  private adopt(packed: Packed): void {
    this.packed = packed
    this.termIds = new Map(packed.terms.map((t, i) => [t, i]))
    this.sessionIndex = new Map(packed.sessionNames.map((n, i) => [n, i]))
    this.maxTf = packed.termMaxTf
    this.minLen = packed.termMinLen
    const { docLength } = packed
    let total = 0
    for (const len of docLength) total += len
    this.totalLength = total
    this.slotOf = new Int32Array(docLength.length).fill(-1)
  }

  /** The signature a session was indexed with (pending changes included), if indexed. */
  signature(name: string): string | undefined {
    const pending = this.pending.get(name)
    if (pending !== undefined) return pending.sig
    if (this.removed.has(name)) return undefined
    const s = this.sessionIndex.get(name)
    return s === undefined ? undefined : this.packed.sessionSigs[s]
  }

  /** The indexed session names (pending changes included). */
  sessions(): Array<string> {
    const out = new Set(this.packed.sessionNames.filter((n) => !this.removed.has(n)))
    for (const n of this.pending.keys()) out.add(n)
    return [...out]
  }

  /** Adds a session's documents, replacing what was indexed for it. */
  put(docs: SessionDocs): void {
    if (this.sessionIndex.has(docs.name)) this.removed.add(docs.name)
    this.pending.set(docs.name, docs)
  }

  /** Removes a session. */
  remove(name: string): void {
    this.pending.delete(name)
    if (this.sessionIndex.has(name)) this.removed.add(name)
  }

  /** Whether changes wait to be packed. */
  get dirty(): boolean {
    return this.pending.size > 0 || this.removed.size > 0
  }

  /** The packed arrays after applying pending changes (what a snapshot saves). */
  pack(): Packed {
    if (this.dirty) {
      this.adopt(repack(this.packed, this.removed, [...this.pending.values()]))
      this.saved = false
    }
    this.pending.clear()
    this.removed.clear()
    return this.packed
  }

  /** Number of live documents. */
  get size(): number {
    return this.pack().docChunk.length
  }

  private hit(d: number, score: number): Hit {
    const p = this.packed
    const session = p.sessionNames[p.docSession[d] ?? 0] ?? ""
    const chunk = p.docChunk[d] ?? 0
    const created = p.docCreated[d] ?? Number.NaN
    return {
      session,
      chunk,
      offset: p.docOffset[d] ?? 0,
      createdAt: Number.isNaN(created) ? null : created,
      snippet: p.docSnippet?.[d],
      chunkId: `${session}:${chunk}`,
      score
    }
  }

  /** Ranked search of `query` with pruning (identical results to {@link scoreAll}). */
  search(query: string, options: QueryOptions): Array<Hit> {
    return this.run(query, options, true)
  }

  /** The plain reference: every posting of every query term scored. */
  scoreAll(query: string, options: QueryOptions): Array<Hit> {
    return this.run(query, options, false)
  }

  private run(query: string, options: QueryOptions, prune: boolean): Array<Hit> {
    const p = this.pack()
    const tokens = tokenize(query)
    const n = p.docChunk.length
    if (tokens.length === 0 || n === 0 || options.maxResults <= 0) return []
    const avgdl = this.totalLength / n
    const q = tokens.length
    // Unique known terms with their query positions, idf and score bound.
    const terms: Array<{ id: number; positions: Array<number>; idf: number; bound: number }> = []
    const byId = new Map<number, (typeof terms)[number]>()
    tokens.forEach((token, position) => {
      const id = this.termIds.get(token)
      if (id === undefined) return
      let term = byId.get(id)
      if (term === undefined) {
        const df = ((p.termStart[id + 1] ?? 0) - (p.termStart[id] ?? 0)) / 2
        term = { id, positions: [], idf: bm25Idf(n, df), bound: 0 }
        byId.set(id, term)
        terms.push(term)
      }
      term.positions.push(position)
    })
    if (terms.length === 0) return []
    for (const t of terms) {
      t.bound = t.positions.length * bm25Term(t.idf, this.maxTf[t.id] ?? 0, this.minLen[t.id] ?? 0, avgdl)
    }
    terms.sort((a, b) => b.bound - a.bound)
    const k = options.maxResults
    const slotOf = this.slotOf
    const cands: Array<number> = []
    let contrib = new Float64Array(64 * q)
    let partial = new Float64Array(64)
    const { postings, termStart } = p
    let rest = 0
    for (const t of terms) rest += t.bound
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i]
      if (t === undefined) continue
      const start = termStart[t.id] ?? 0
      const end = termStart[t.id + 1] ?? 0
      const essential = !prune || i === 0 ||
        !(rest * MAX_RECENCY_MULTIPLIER * (1 + EPS) < kthLargest(partial, cands.length, k) * (1 - EPS))
      rest -= t.bound
      if (essential) {
        for (let j = start; j < end; j += 2) {
          const d = postings[j] ?? 0
          const c = bm25Term(t.idf, postings[j + 1] ?? 0, p.docLength[d] ?? 0, avgdl)
          let s = slotOf[d] ?? -1
          if (s < 0) {
            s = cands.length
            slotOf[d] = s
            cands.push(d)
            if (s >= partial.length) {
              partial = grow(partial, partial.length * 2)
              contrib = grow(contrib, partial.length * q)
            }
          }
          for (const pos of t.positions) contrib[s * q + pos] = c
          partial[s] = (partial[s] ?? 0) + c * t.positions.length
        }
      } else {
        for (let s = 0; s < cands.length; s++) {
          const d = cands[s] ?? 0
          const tf = lookupTf(postings, start, end, d)
          if (tf === 0) continue
          const c = bm25Term(t.idf, tf, p.docLength[d] ?? 0, avgdl)
          for (const pos of t.positions) contrib[s * q + pos] = c
          partial[s] = (partial[s] ?? 0) + c * t.positions.length
        }
      }
    }
    for (const d of cands) slotOf[d] = -1
    const top = new TopK(k, options.minScore)
    for (let s = 0; s < cands.length; s++) {
      // Summed in query order from 0, as a full scoring does (absent terms add exactly 0).
      let lexical = 0
      for (let pos = 0; pos < q; pos++) lexical += contrib[s * q + pos] ?? 0
      if (prune && !top.admits(lexical * MAX_RECENCY_MULTIPLIER * (1 + EPS))) continue
      const d = cands[s] ?? 0
      const created = p.docCreated[d] ?? Number.NaN
      const score = lexical * recencyMultiplier(Number.isNaN(created) ? null : created, options.now)
      top.offer(d, score, () => this.hit(d, score))
    }
    return top.hits()
  }
}

const grow = (a: Float64Array, size: number): Float64Array<ArrayBuffer> => {
  const b = new Float64Array(size)
  b.set(a)
  return b
}

/** The tf of document `d` in a term's `[start, end)` postings, 0 when absent (binary search). */
const lookupTf = (postings: Int32Array, start: number, end: number, d: number): number => {
  let lo = 0
  let hi = (end - start) / 2 - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const doc = postings[start + 2 * mid] ?? 0
    if (doc === d) return postings[start + 2 * mid + 1] ?? 0
    if (doc < d) lo = mid + 1
    else hi = mid - 1
  }
  return 0
}

/** The k-th largest of `values[0..count)`; 0 when fewer than k (no document is safe to ignore then). */
const kthLargest = (values: Float64Array, count: number, k: number): number => {
  if (count < k) return 0
  const top = makeLargest(k)
  for (let i = 0; i < count; i++) top.offer(values[i] ?? 0)
  return top.min()
}

/** The k best hits so far (score descending, chunk id ascending). */
class TopK {
  private readonly list: Array<Hit> = []
  private readonly k: number
  private readonly minScore: number
  constructor(k: number, minScore: number) {
    this.k = k
    this.minScore = minScore
  }

  /** Whether a document scoring at most `bound` could still be kept (ties may enter by chunk id). */
  admits(bound: number): boolean {
    if (!(bound > 0) || bound < this.minScore) return false
    const last = this.list.length < this.k ? undefined : this.list[this.list.length - 1]
    return last === undefined || bound >= last.score
  }

  offer(_doc: number, score: number, make: () => Hit): void {
    if (!keepsScore(score, this.minScore)) return
    const list = this.list
    const last = list.length >= this.k ? list[list.length - 1] : undefined
    if (last !== undefined && score < last.score) return
    const hit = make()
    if (last !== undefined && compareRanked(hit, last) >= 0) return
    // Binary search for the first kept hit ranked after this one (a linear walk made a
    // --max in the thousands cost k steps per insertion).
    let lo = 0
    let hi = list.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      const at = list[mid]
      if (at !== undefined && compareRanked(at, hit) <= 0) lo = mid + 1
      else hi = mid
    }
    list.splice(lo, 0, hit)
    if (list.length > this.k) list.pop()
  }

  hits(): Array<Hit> {
    return [...this.list]
  }
}

/** Drops the documents of `removed` sessions and appends `added` ones, renumbering documents and terms. */
const repack = (old: Packed, removed: ReadonlySet<string>, added: ReadonlyArray<SessionDocs>): Packed => {
  const oldDocs = old.docChunk.length
  const remap = new Int32Array(oldDocs).fill(-1)
  const sessionNames: Array<string> = []
  const sessionSigs: Array<string> = []
  const sessionStarts: Array<number> = [0]
  const keptOld: Array<number> = []
  let next = 0
  old.sessionNames.forEach((name, s) => {
    if (removed.has(name)) return
    const from = old.sessionStart[s] ?? 0
    const to = old.sessionStart[s + 1] ?? 0
    for (let d = from; d < to; d++) {
      remap[d] = next++
      keptOld.push(d)
    }
    sessionNames.push(name)
    sessionSigs.push(old.sessionSigs[s] ?? "")
    sessionStarts.push(next)
  })
  let addedDocs = 0
  for (const a of added) addedDocs += a.docs.length
  const total = next + addedDocs
  const docSession = new Int32Array(total)
  const docChunk = new Int32Array(total)
  const docLength = new Int32Array(total)
  const docOffset = new Float64Array(total)
  const docCreated = new Float64Array(total)
  const withSnippets = old.docSnippet !== undefined || added.some((a) => a.docs.some((d) => d.snippet !== undefined))
  const docSnippet: Array<string> | undefined = withSnippets ? new Array<string>(total).fill("") : undefined
  for (let s = 0; s < sessionNames.length; s++) {
    for (let d = sessionStarts[s] ?? 0; d < (sessionStarts[s + 1] ?? 0); d++) docSession[d] = s
  }
  keptOld.forEach((od, nd) => {
    docChunk[nd] = old.docChunk[od] ?? 0
    docLength[nd] = old.docLength[od] ?? 0
    docOffset[nd] = old.docOffset[od] ?? 0
    docCreated[nd] = old.docCreated[od] ?? Number.NaN
    if (docSnippet !== undefined) docSnippet[nd] = old.docSnippet?.[od] ?? ""
  })
  // New documents and their postings by term.
  const fresh = new Map<string, Array<number>>()
  for (const a of added) {
    const s = sessionNames.length
    sessionNames.push(a.name)
    sessionSigs.push(a.sig)
    a.docs.forEach((doc, i) => {
      const d = next++
      docSession[d] = s
      docChunk[d] = doc.chunk
      docLength[d] = a.lengths[i] ?? 0
      docOffset[d] = doc.offset
      docCreated[d] = doc.createdAt ?? Number.NaN
      if (docSnippet !== undefined) docSnippet[d] = doc.snippet ?? ""
      const tf = a.tfs[i]
      if (tf === undefined) return
      for (const [t, f] of tf) {
        let list = fresh.get(t)
        if (list === undefined) fresh.set(t, list = [])
        list.push(d, f)
      }
    })
    sessionStarts.push(next)
  }
  // Count surviving postings per term, then copy.
  const terms: Array<string> = []
  const counts: Array<number> = []
  const oldIds: Array<number> = []
  old.terms.forEach((term, t) => {
    let live = 0
    for (let i = old.termStart[t] ?? 0; i < (old.termStart[t + 1] ?? 0); i += 2) {
      if ((remap[old.postings[i] ?? 0] ?? -1) >= 0) live += 2
    }
    const extra = fresh.get(term)?.length ?? 0
    if (live + extra === 0) return
    terms.push(term)
    counts.push(live + extra)
    oldIds.push(t)
  })
  const known = new Set(old.terms)
  for (const [term, list] of fresh) {
    if (known.has(term)) continue
    terms.push(term)
    counts.push(list.length)
    oldIds.push(-1)
  }
  const termStart = new Int32Array(terms.length + 1)
  for (let t = 0; t < terms.length; t++) termStart[t + 1] = (termStart[t] ?? 0) + (counts[t] ?? 0)
  const postings = new Int32Array(termStart[terms.length] ?? 0)
  for (let t = 0; t < terms.length; t++) {
    let w = termStart[t] ?? 0
    const ot = oldIds[t] ?? -1
    if (ot >= 0) {
      for (let i = old.termStart[ot] ?? 0; i < (old.termStart[ot + 1] ?? 0); i += 2) {
        const nd = remap[old.postings[i] ?? 0] ?? -1
        if (nd < 0) continue
        postings[w++] = nd
        postings[w++] = old.postings[i + 1] ?? 0
      }
    }
    for (const v of fresh.get(terms[t] ?? "") ?? []) postings[w++] = v
  }
  const termMaxTf = new Int32Array(terms.length)
  const termMinLen = new Int32Array(terms.length)
  for (let t = 0; t < terms.length; t++) {
    let maxTf = 0
    let minLen = 0x7fffffff
    for (let i = termStart[t] ?? 0; i < (termStart[t + 1] ?? 0); i += 2) {
      const f = postings[i + 1] ?? 0
      if (f > maxTf) maxTf = f
      const len = docLength[postings[i] ?? 0] ?? 0
      if (len < minLen) minLen = len
    }
    termMaxTf[t] = maxTf
    termMinLen[t] = minLen
  }
  return {
    termMaxTf,
    termMinLen,
    terms,
    termStart,
    postings,
    docSession,
    docChunk,
    docLength,
    docOffset,
    docCreated,
    docSnippet,
    sessionNames,
    sessionSigs,
    sessionStart: Int32Array.from(sessionStarts)
  }
}
