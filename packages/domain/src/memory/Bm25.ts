/**
 * Ranking rules of memory search (docs/search.md#ranking), as pure functions: the BM25 term
 * weight with k1 = 1.2 and b = 0.75, the idf `ln((N − df + 0.5)/(df + 0.5) + 1)`, the mild recency
 * multiplier (weight 0.1, half-life 30 days) and the result order. Indexes in `projections` only
 * decide which documents to score; every score comes from here, so a pruned search and a full
 * scoring can only differ in work, never in results.
 */

/** BM25 term-frequency saturation. */
export const BM25_K1 = 1.2

/** BM25 length normalisation. */
export const BM25_B = 0.75

/** Weight of the recency multiplier: a brand-new document scores at most 10 % more. */
export const RECENCY_WEIGHT = 0.1

/** Half-life of the recency bonus, in days. */
export const RECENCY_HALF_LIFE_DAYS = 30

/** Default number of results of a search. */
export const DEFAULT_MAX_RESULTS = 6

const SECONDS_PER_DAY = 86_400

/** Inverse document frequency of a term found in `df` of `n` documents. */
export const bm25Idf = (n: number, df: number): number => Math.log((n - df + 0.5) / (df + 0.5) + 1)

/**
 * One query token's contribution to a document: `idf · f · (k1 + 1) / (f + k1 · (1 − b + b · |d| / max(avgdl, 1)))`
 * for a term occurring `tf` times in a document of `docLength` tokens; 0 when `tf` is 0.
 */
export const bm25Term = (idf: number, tf: number, docLength: number, avgdl: number): number =>
  tf <= 0
    ? 0
    : (idf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * docLength) / Math.max(avgdl, 1)))

/**
 * The largest value `bm25Term` can take for this idf over any document (tf → ∞ on the shortest
 * possible normalisation): `idf · (k1 + 1)`. Used to stop scoring when nothing unseen can win.
 */
export const bm25TermBound = (idf: number): number => idf * (BM25_K1 + 1)

/**
 * The recency multiplier for a document created at `createdAt` (Unix seconds) seen at `now`:
 * `1 + 0.1 · 2^(−age_days / 30)`, age clamped at 0 (future timestamps are new); 1.0 when the
 * document has no timestamp. Always in [1.0, 1.1].
 */
export const recencyMultiplier = (createdAt: number | null, now: number): number => {
  if (createdAt === null) return 1
  const ageDays = Math.max(0, now - createdAt) / SECONDS_PER_DAY
  return 1 + RECENCY_WEIGHT * Math.pow(2, -ageDays / RECENCY_HALF_LIFE_DAYS)
}

/** The largest multiplier any document can get. */
export const MAX_RECENCY_MULTIPLIER = 1 + RECENCY_WEIGHT

/** Byte-wise (UTF-8 order) string comparison, which is UTF-16 order except around surrogates. */
export const compareBytewise = (a: string, b: string): number => {
  if (a === b) return 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i) ?? 0
    const cb = b.codePointAt(i) ?? 0
    if (ca !== cb) return ca < cb ? -1 : 1
    if (ca > 0xffff) i++
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0
}

/** A scored document: its final score and its chunk id. */
export interface Ranked {
  readonly score: number
  readonly chunkId: string
}

/** The result order: score descending, ties by chunk id ascending (byte-wise). */
export const compareRanked = (a: Ranked, b: Ranked): number =>
  a.score !== b.score ? (a.score > b.score ? -1 : 1) : compareBytewise(a.chunkId, b.chunkId)

/** Whether a final score is kept: positive and at least `minScore`. */
export const keepsScore = (score: number, minScore: number): boolean => score > 0 && score >= minScore

/**
 * The final score of one document for a query: each query token's {@link bm25Term} (`tokens` in
 * query order, a repeated token counted again; `tfOf` is 0 for a token the document lacks) summed
 * in query order from 0, as every index sums them, times the {@link recencyMultiplier}. Two
 * indexes that store the same term statistics get bit-identical scores from it.
 */
export const bm25Score = (
  tokens: ReadonlyArray<string>,
  idfOf: (token: string) => number,
  tfOf: (token: string) => number,
  docLength: number,
  avgdl: number,
  createdAt: number | null,
  now: number
): number => {
  let lexical = 0
  for (const token of tokens) lexical += bm25Term(idfOf(token), tfOf(token), docLength, avgdl)
  return lexical * recencyMultiplier(createdAt, now)
}
