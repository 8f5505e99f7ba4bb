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
