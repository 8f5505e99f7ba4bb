/**
 * A whole-index codec of the packed arrays of a `SearchIndex` (the single-file snapshot searches
 * used before the segmented on-disk index, docs/search.md#on-disk-index; no search reads or writes
 * it any more, the in-memory index's property test round-trips through it). Layout: an 8-byte magic, three little-endian u32 (header
 * length, float count, int count), a JSON header (scope, terms, session names and signatures,
 * history snippets, array sizes), then one Float64 block (document offsets, creation times) and one
 * Int32 block (term starts, postings, document session/chunk/length, session starts). Anything that
 * does not decode exactly is "no snapshot" (the caller rebuilds).
 */
import { UndefinedOr } from "effect"
import type { Packed } from "./searchIndex.ts"

// 4: documents and snippets hold redacted text (docs/security.md); a version-3 snapshot is rebuilt.
const MAGIC = "LBSIDX4\n"
const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

interface Header {
  readonly scope: string
  readonly terms: ReadonlyArray<string>
  readonly sessionNames: ReadonlyArray<string>
  readonly sessionSigs: ReadonlyArray<string>
  readonly snippets: ReadonlyArray<string> | null
  readonly postings: number
  readonly docs: number
}

const pad8 = (n: number): number => (n + 7) & ~7

/** Encodes packed arrays of `scope` as snapshot bytes. */
export const encodeSnapshot = (scope: string, p: Packed): Uint8Array => {
  const docs = p.docChunk.length
  const header = encoder.encode(JSON.stringify(
    {
      scope,
      terms: p.terms,
      sessionNames: p.sessionNames,
      sessionSigs: p.sessionSigs,
      snippets: p.docSnippet ?? null,
      postings: p.postings.length,
      docs
    } satisfies Header
  ))
  const floats = 2 * docs
  const ints = p.termStart.length + p.postings.length + 3 * docs + p.sessionStart.length + 2 * p.terms.length
  const headerEnd = pad8(20 + header.length)
  const out = new Uint8Array(headerEnd + floats * 8 + ints * 4)
  out.set(encoder.encode(MAGIC), 0)
  const view = new DataView(out.buffer)
  view.setUint32(8, header.length, true)
  view.setUint32(12, floats, true)
  view.setUint32(16, ints, true)
  out.set(header, 20)
  const f64 = new Float64Array(out.buffer, headerEnd, floats)
  f64.set(p.docOffset, 0)
  f64.set(p.docCreated, docs)
  const i32 = new Int32Array(out.buffer, headerEnd + floats * 8, ints)
  let at = 0
  for (
    const part of [
      p.termStart,
      p.postings,
      p.docSession,
      p.docChunk,
      p.docLength,
      p.sessionStart,
      p.termMaxTf,
      p.termMinLen
    ]
  ) {
    i32.set(part, at)
    at += part.length
  }
  return out
}

const parseJson: (text: string) => unknown = UndefinedOr.liftThrowable((text: string): unknown => JSON.parse(text))
const decodeText: (bytes: Uint8Array) => string | undefined = UndefinedOr.liftThrowable((bytes: Uint8Array) =>
  decoder.decode(bytes)
)

const isStrings = (u: unknown): u is ReadonlyArray<string> => Array.isArray(u) && u.every((x) => typeof x === "string")

const isHeader = (u: unknown): u is Header =>
  typeof u === "object" && u !== null && "scope" in u && "terms" in u && "sessionNames" in u &&
  "sessionSigs" in u && "snippets" in u && "postings" in u && "docs" in u &&
  isStrings(u.terms) && isStrings(u.sessionNames) && isStrings(u.sessionSigs) &&
  (u.snippets === null || isStrings(u.snippets)) && Number.isSafeInteger(u.postings) && Number.isSafeInteger(u.docs)

/** Decodes snapshot bytes of `scope`; `undefined` when they are not a consistent snapshot of it. */
export const decodeSnapshot = (scope: string, bytes: Uint8Array): Packed | undefined => {
  if (bytes.length < 24 || decodeText(bytes.subarray(0, 8)) !== MAGIC) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const headerLen = view.getUint32(8, true)
  const floats = view.getUint32(12, true)
  const ints = view.getUint32(16, true)
  const headerEnd = pad8(20 + headerLen)
  if (headerEnd + floats * 8 + ints * 4 !== bytes.length) return undefined
  const text = decodeText(bytes.subarray(20, 20 + headerLen))
  const h = text === undefined ? undefined : parseJson(text)
  if (!isHeader(h) || h.scope !== scope) return undefined
  const docs = h.docs
  const nTerms = h.terms.length
  const nSessions = h.sessionNames.length
  if (
    floats !== 2 * docs || h.sessionSigs.length !== nSessions || (h.snippets !== null && h.snippets.length !== docs)
  ) {
    return undefined
  }
  if (ints !== nTerms + 1 + h.postings + 3 * docs + nSessions + 1 + 2 * nTerms) return undefined
  // `new Uint8Array(view)` copies into an aligned buffer of its own (a Node Buffer may sit in a shared pool).
  const f64 = new Float64Array(new Uint8Array(bytes.subarray(headerEnd, headerEnd + floats * 8)).buffer)
  const i32 = new Int32Array(new Uint8Array(bytes.subarray(headerEnd + floats * 8)).buffer)
  let at = 0
  const take = (n: number): Int32Array => {
    const part = i32.subarray(at, at + n)
    at += n
    return part
  }
  const termStart = take(nTerms + 1)
  const postings = take(h.postings)
  const docSession = take(docs)
  const docChunk = take(docs)
  const docLength = take(docs)
  const sessionStart = take(nSessions + 1)
  const termMaxTf = take(nTerms)
  const termMinLen = take(nTerms)
  // Every reference must stay in bounds, so a damaged file can never index outside the arrays.
  if (
    termStart[0] !== 0 || termStart[nTerms] !== h.postings || sessionStart[0] !== 0 || sessionStart[nSessions] !== docs
  ) {
    return undefined
  }
  // Structure only: a stale or damaged snapshot is caught by the signatures and these sizes; a
  // document number out of range would read as absent (typed arrays never read outside themselves).
  for (let t = 0; t < nTerms; t++) if ((termStart[t + 1] ?? 0) < (termStart[t] ?? 0)) return undefined
  return {
    terms: h.terms,
    termStart,
    postings,
    docSession,
    docChunk,
    docLength,
    docOffset: f64.subarray(0, docs),
    docCreated: f64.subarray(docs, 2 * docs),
    docSnippet: h.snippets ?? undefined,
    sessionNames: h.sessionNames,
    sessionSigs: h.sessionSigs,
    sessionStart,
    termMaxTf,
    termMinLen
  }
}
