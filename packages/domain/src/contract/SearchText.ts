/**
 * The search tokeniser (docs/search.md#tokens): the one definition of what a "word" is for both
 * the documents and the query, so a fact, a turn and a query are always split the same way.
 */

// Every character that is neither alphabetic nor numeric in the Unicode sense separates tokens.
const SEPARATORS = /[^\p{Alphabetic}\p{N}]+/u

/**
 * Splits `text` on every run of characters that are not Unicode-alphabetic or numeric, lowercases
 * each piece (Unicode lowercase) and drops empty pieces. Duplicates are kept, in order.
 */
export const tokenize = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const piece of text.split(SEPARATORS)) {
    if (piece.length > 0) out.push(piece.toLowerCase())
  }
  return out
}

/** The distinct tokens of `text`, in first-occurrence order (for highlighting). */
export const distinctTokens = (text: string): Array<string> => [...new Set(tokenize(text))]

/** What ranking needs of one document: how often each token occurs, and its length in tokens. */
export interface TermFrequencies {
  readonly tf: ReadonlyMap<string, number>
  readonly length: number
}

/**
 * The term statistics BM25 reads from a document: each distinct token of `text` with its count
 * and the number of tokens (duplicates included). Every index — the in-process one and the fleet's
 * stored rows — derives its postings from this, so they agree on every document.
 */
export const termFrequencies = (text: string): TermFrequencies => {
  const tokens = tokenize(text)
  const tf = new Map<string, number>()
  for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1)
  return { tf, length: tokens.length }
}
