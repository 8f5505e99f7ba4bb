/**
 * The saved search index (docs/search.md#index-snapshot): every segment of a `SearchIndex` in one
 * compact binary file below the sessions root, so a one-shot `logbook search` loads it instead of
 * re-reading every session. Layout: an 8-byte magic, three little-endian u32 (header length,
 * float count, int count), a JSON header (scope, the term dictionary, per-segment name, signature,
 * document count, term count and snippets), then one Float64 block and one Int32 block.
 * Anything that does not decode is "no snapshot" (the caller rebuilds).
 */
import { UndefinedOr } from "effect"
import type { Postings, Segment } from "./searchIndex.ts"

const MAGIC = "LBSIDX1\n"
const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

interface Header {
  readonly scope: string
  readonly terms: ReadonlyArray<string>
  readonly segs: ReadonlyArray<readonly [string, string, number, number]>
  readonly snippets: ReadonlyArray<ReadonlyArray<string> | null>
}

const pad8 = (n: number): number => (n + 7) & ~7

/** Encodes segments (of one scope) as snapshot bytes. */
export const encodeSnapshot = (scope: string, segments: Iterable<Segment>): Uint8Array => {
  const termIds = new Map<string, number>()
  const terms: Array<string> = []
  const segs: Array<readonly [string, string, number, number]> = []
  const snippets: Array<ReadonlyArray<string> | null> = []
  let floats = 0
  let ints = 0
  const list = [...segments]
  for (const s of list) {
    const n = s.lengths.length
    segs.push([s.name, s.sig, n, s.terms.size])
    snippets.push(s.snippets ?? null)
    floats += 2 * n
    ints += 2 * n
    for (const [t, p] of s.terms) {
      if (!termIds.has(t)) {
        termIds.set(t, terms.length)
        terms.push(t)
      }
      ints += 2 + p.length
    }
  }
  const header = encoder.encode(JSON.stringify({ scope, terms, segs, snippets } satisfies Header))
  const headerEnd = pad8(20 + header.length)
  const out = new Uint8Array(headerEnd + floats * 8 + ints * 4)
  out.set(encoder.encode(MAGIC), 0)
  const view = new DataView(out.buffer)
  view.setUint32(8, header.length, true)
  view.setUint32(12, floats, true)
  view.setUint32(16, ints, true)
  out.set(header, 20)
  const f64 = new Float64Array(out.buffer, headerEnd, floats)
  const i32 = new Int32Array(out.buffer, headerEnd + floats * 8, ints)
  let fi = 0
  let ii = 0
  for (const s of list) {
    f64.set(s.offsets, fi)
    f64.set(s.createdAt, fi + s.offsets.length)
    fi += 2 * s.offsets.length
    i32.set(s.chunks, ii)
    i32.set(s.lengths, ii + s.chunks.length)
    ii += 2 * s.chunks.length
    for (const [t, p] of s.terms) {
      i32[ii++] = termIds.get(t) ?? 0
      i32[ii++] = p.length
      i32.set(p, ii)
      ii += p.length
    }
  }
  return out
}

const isHeader = (u: unknown): u is Header =>
  typeof u === "object" && u !== null && "scope" in u && "terms" in u && "segs" in u && "snippets" in u &&
  Array.isArray(u.terms) && Array.isArray(u.segs) && Array.isArray(u.snippets)

const parseJson: (text: string) => unknown = UndefinedOr.liftThrowable((text: string): unknown => JSON.parse(text))
const decodeText: (bytes: Uint8Array) => string | undefined = UndefinedOr.liftThrowable((bytes: Uint8Array) =>
  decoder.decode(bytes)
)

/** Decodes snapshot bytes of `scope`; `undefined` when they are not a well-formed snapshot of it. */
export const decodeSnapshot = (scope: string, bytes: Uint8Array): Array<Segment> | undefined => {
  if (bytes.length < 24 || decodeText(bytes.subarray(0, 8)) !== MAGIC) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const headerLen = view.getUint32(8, true)
  const floats = view.getUint32(12, true)
  const ints = view.getUint32(16, true)
  const headerEnd = pad8(20 + headerLen)
  if (headerEnd + floats * 8 + ints * 4 !== bytes.length) return undefined
  const headerText = decodeText(bytes.subarray(20, 20 + headerLen))
  const header = headerText === undefined ? undefined : parseJson(headerText)
  if (!isHeader(header) || header.scope !== scope || header.snippets.length !== header.segs.length) return undefined
  // Copies: the typed arrays need aligned buffers of their own.
  // (`new Uint8Array(view)` copies; a Node Buffer's own `slice` would be a view into a shared pool.)
  const f64 = new Float64Array(new Uint8Array(bytes.subarray(headerEnd, headerEnd + floats * 8)).buffer)
  const i32 = new Int32Array(new Uint8Array(bytes.subarray(headerEnd + floats * 8)).buffer)
  const segments: Array<Segment> = []
  let fi = 0
  let ii = 0
  for (let k = 0; k < header.segs.length; k++) {
    const entry = header.segs[k]
    if (!Array.isArray(entry) || entry.length !== 4) return undefined
    const [name, sig, n, termCount] = entry
    if (typeof name !== "string" || typeof sig !== "string" || !Number.isSafeInteger(n) || n < 0) return undefined
    if (fi + 2 * n > f64.length || ii + 2 * n > i32.length) return undefined
    const offsets = f64.subarray(fi, fi + n)
    const createdAt = f64.subarray(fi + n, fi + 2 * n)
    fi += 2 * n
    const chunks = i32.subarray(ii, ii + n)
    const lengths = i32.subarray(ii + n, ii + 2 * n)
    ii += 2 * n
    const terms = new Map<string, Postings>()
    for (let t = 0; t < termCount; t++) {
      const term = header.terms[i32[ii] ?? -1]
      const len = i32[ii + 1] ?? 0
      if (typeof term !== "string" || len < 2 || ii + 2 + len > i32.length) return undefined
      terms.set(term, i32.subarray(ii + 2, ii + 2 + len))
      ii += 2 + len
    }
    let newest = Number.NaN
    for (const c of createdAt) if (!Number.isNaN(c) && !(c <= newest)) newest = c
    const snippets = header.snippets[k]
    segments.push({
      name,
      sig,
      chunks,
      offsets,
      lengths,
      createdAt,
      newest,
      snippets: Array.isArray(snippets) ? snippets : undefined,
      terms,
      dead: false
    })
  }
  if (fi !== floats || ii !== ints) return undefined
  return segments
}
