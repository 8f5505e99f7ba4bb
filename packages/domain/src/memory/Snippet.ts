/**
 * Result snippets for search (docs/search.md#ranking): a short, whitespace-flattened window of a
 * document's text placed around the first word that matches the query, so a history result shows
 * why it matched instead of the turn's opening lines.
 */

// A word is what the search tokeniser keeps: a run of Unicode-alphabetic or numeric characters.
const WORD = /[\p{Alphabetic}\p{N}]+/gu

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

// Moves a cut forward (or backward) so it never falls between the halves of a surrogate pair.
const snapForward = (text: string, at: number): number =>
  at > 0 && at < text.length && isLowSurrogate(text.charCodeAt(at)) && isHighSurrogate(text.charCodeAt(at - 1))
    ? at + 1
    : at
const snapBackward = (text: string, at: number): number =>
  at > 0 && at < text.length && isLowSurrogate(text.charCodeAt(at)) && isHighSurrogate(text.charCodeAt(at - 1))
    ? at - 1
    : at

/**
 * The position and length of the first word of `text` whose lowercase form is one of `terms`
 * (already lowercased tokens, as `tokenize` gives), or `undefined` when no word matches.
 */
export const firstMatch = (
  text: string,
  terms: ReadonlySet<string>
): { readonly index: number; readonly length: number } | undefined => {
  if (terms.size === 0) return undefined
  for (const m of text.matchAll(WORD)) {
    if (terms.has(m[0].toLowerCase())) return { index: m.index, length: m[0].length }
  }
  return undefined
}

/**
 * A snippet of `text` at most `maxChars` UTF-16 code units long (`maxChars` ≥ 8): whitespace runs
 * become one space and the ends are trimmed; a text that fits is returned whole. Otherwise the
 * window starts a quarter of its width before the first word matching one of `terms` (lowercased
 * query tokens), or at the start when nothing matches, and a cut end is marked with `…`. The
 * matched word is always inside the window when it fits in it; no cut splits a surrogate pair.
 */
export const snippetAround = (text: string, terms: ReadonlySet<string>, maxChars: number): string => {
  const flat = text.replace(/\s+/gu, " ").trim()
  if (flat.length <= maxChars) return flat
  const match = firstMatch(flat, terms)
  // Room for the text itself once both possible ellipses are paid for.
  const budget = Math.max(1, maxChars - 2)
  let start = 0
  if (match !== undefined && match.index + match.length > maxChars - 1) {
    const lead = Math.min(Math.floor(budget / 4), Math.max(0, budget - match.length))
    start = Math.max(0, Math.min(match.index - lead, flat.length - budget))
    // Start at a word boundary when one is close enough to keep the match in the window.
    const space = flat.indexOf(" ", start)
    if (start > 0 && flat[start - 1] !== " " && space >= 0 && space < match.index) start = space + 1
    start = snapForward(flat, start)
  }
  const room = start === 0 ? maxChars - 1 : budget
  const end = snapBackward(flat, Math.min(flat.length, start + room))
  const body = flat.slice(start, end)
  return `${start > 0 ? "…" : ""}${body}${end < flat.length ? "…" : ""}`
}
