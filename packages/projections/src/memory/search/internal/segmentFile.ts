/**
 * One immutable segment of the on-disk search index (docs/search.md#segments): the packed
 * documents of some sessions, laid out so that a query reads only the blocks it needs, at their
 * offsets, and verifies each one's CRC-32 before using it.
 *
 * Layout: the 8-byte magic `LBSEG01\n`, the dictionary blocks (JSON arrays of up to
 * {@link TERMS_PER_BLOCK} `[term, run offset, run length, df, crc]`, terms sorted by UTF-16 code
 * units), the postings (one run per term of unsigned LEB128 varints `doc delta, tf, doc length`,
 * documents ascending), the document blocks (JSON arrays of up to {@link DOCS_PER_BLOCK}
 * `[session, chunk, offset, created]`), the snippet blocks (JSON arrays of the stored snippets of as
 * many documents), then the footer: the header JSON (scope, counts,
 * total length, the session table `[name, signature, first doc, docs, length]`, the block index),
 * its byte length and CRC-32 (two u32) and the 8-byte end magic `LBSEGEND`.
 *
 * **Gotchas**: the footer is last so that a truncated file never has one (the size it records
 * must equal the file's); every other block is checked when read, so corruption found during a
 * query fails it with {@link SegmentCorrupt} rather than ranking damaged postings.
 */
import { Data, UndefinedOr } from "effect"
import { crc32 } from "./crc32.ts"
import type { Packed } from "./searchIndex.ts"

const MAGIC = "LBSEG01\n"
const END = "LBSEGEND"
/** Terms per dictionary block: one block read per query term and segment. */
export const TERMS_PER_BLOCK = 128
/** Documents per document block: one block read per ranked hit (at most). */
export const DOCS_PER_BLOCK = 128
const FOOTER = 16

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

/** A segment block failed its checksum or structure check (the segment must be rebuilt). */
export class SegmentCorrupt extends Data.TaggedError("SegmentCorrupt")<{
  readonly operation: string
  readonly path: string
  readonly detail: string
}> {
  override get message(): string {
    return `search segment ${this.path}: ${this.detail} (${this.operation})`
  }
}

/** One session of a segment: its documents are `[start, start + count)`. */
export interface SegmentSession {
  readonly name: string
  readonly sig: string
  readonly start: number
  readonly count: number
  /** Sum of its documents' lengths (tokens). */
  readonly length: number
}

/** A block's place in the file: `[offset, offset + length)` and its CRC-32. */
export interface BlockRef {
  readonly offset: number
  readonly length: number
  readonly crc: number
}

/** What a segment's footer says: everything a query needs before reading blocks. */
export interface SegmentHeader {
  readonly scope: string
  readonly size: number
  readonly docs: number
  readonly totalLength: number
  readonly sessions: ReadonlyArray<SegmentSession>
  /** First term of each dictionary block. */
  readonly blockTerms: ReadonlyArray<string>
  readonly blocks: ReadonlyArray<BlockRef>
  /** Byte offset of the postings region. */
  readonly postings: number
  readonly docBlocks: ReadonlyArray<BlockRef>
  /** The stored snippets, {@link DOCS_PER_BLOCK} documents per block. */
  readonly snippetBlocks: ReadonlyArray<BlockRef>
}

/** A term's entry: its postings run `[offset, offset + length)` of the postings region, df and CRC-32. */
export interface TermEntry {
  readonly term: string
  readonly offset: number
  readonly length: number
  readonly df: number
  readonly crc: number
}

/** A document's stored fields. */
export interface SegmentDoc {
  readonly session: number
  readonly chunk: number
  readonly offset: number
  readonly createdAt: number | null
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Encodes packed documents of `scope` as one segment file. */
export const encodeSegment = (scope: string, p: Packed): Uint8Array => {
  const parts: Array<Uint8Array> = [encoder.encode(MAGIC)]
  let at = MAGIC.length
  const push = (bytes: Uint8Array): BlockRef => {
    const ref = { offset: at, length: bytes.length, crc: crc32(bytes) }
    parts.push(bytes)
    at += bytes.length
    return ref
  }
  const order = p.terms.map((_, i) => i).sort((a, b) => byCodeUnits(p.terms[a] ?? "", p.terms[b] ?? ""))
  // Postings first in memory (their CRCs go into the dictionary), written after it: sized exactly
  // in a first pass, then written in place, so a merge of 65 536 documents holds the region once
  // (not a JavaScript array of numbers per term and a copy of every run besides).
  let bytesAt = 0
  for (const t of order) bytesAt += runSize(p, p.termStart[t] ?? 0, p.termStart[t + 1] ?? 0)
  const region = new Uint8Array(bytesAt)
  const entries: Array<[string, number, number, number, number]> = []
  let r = 0
  for (const t of order) {
    const from = p.termStart[t] ?? 0
    const to = p.termStart[t + 1] ?? 0
    const end = writeRun(p, from, to, region, r)
    entries.push([p.terms[t] ?? "", r, end - r, (to - from) / 2, crc32(region.subarray(r, end))])
    r = end
  }
  const blockTerms: Array<string> = []
  const blocks: Array<BlockRef> = []
  for (let i = 0; i < entries.length; i += TERMS_PER_BLOCK) {
    const block = entries.slice(i, i + TERMS_PER_BLOCK)
    blockTerms.push(block[0]?.[0] ?? "")
    blocks.push(push(encoder.encode(JSON.stringify(block))))
  }
  const postings = at
  push(region)
  const docs = p.docChunk.length
  const docBlocks: Array<BlockRef> = []
  for (let i = 0; i < docs; i += DOCS_PER_BLOCK) {
    const rows: Array<[number, number, number, number | null]> = []
    for (let d = i; d < Math.min(docs, i + DOCS_PER_BLOCK); d++) {
      const created = p.docCreated[d] ?? Number.NaN
      rows.push([p.docSession[d] ?? 0, p.docChunk[d] ?? 0, p.docOffset[d] ?? 0, Number.isNaN(created) ? null : created])
    }
    docBlocks.push(push(encoder.encode(JSON.stringify(rows))))
  }
  // Stored snippets apart: ranking reads document blocks for many candidates, snippets only for hits.
  const snippetBlocks: Array<BlockRef> = []
  for (let i = 0; i < docs; i += DOCS_PER_BLOCK) {
    const rows: Array<string | null> = []
    for (let d = i; d < Math.min(docs, i + DOCS_PER_BLOCK); d++) rows.push(p.docSnippet?.[d] ?? null)
    snippetBlocks.push(push(encoder.encode(JSON.stringify(rows))))
  }
  let totalLength = 0
  const sessions = p.sessionNames.map((name, s) => {
    const start = p.sessionStart[s] ?? 0
    const end = p.sessionStart[s + 1] ?? 0
    let length = 0
    for (let d = start; d < end; d++) length += p.docLength[d] ?? 0
    totalLength += length
    return [name, p.sessionSigs[s] ?? "", start, end - start, length]
  })
  const headerStart = at
  const body = {
    v: 1,
    scope,
    docs,
    totalLength,
    sessions,
    blocks: blocks.map((b, i) => [blockTerms[i], b.offset, b.length, b.crc]),
    postings,
    docBlocks: docBlocks.map((b) => [b.offset, b.length, b.crc]),
    snippetBlocks: snippetBlocks.map((b) => [b.offset, b.length, b.crc])
  }
  // The size is part of the header: computed with a fixed-width placeholder, then filled in.
  const draft = JSON.stringify({ ...body, size: "0".repeat(16) })
  const size = headerStart + encoder.encode(draft).length + FOOTER
  const header = encoder.encode(JSON.stringify({ ...body, size: String(size).padStart(16, "0") }))
  const total = headerStart + header.length + FOOTER
  const out = new Uint8Array(total)
  let o = 0
  for (const part of parts) {
    out.set(part, o)
    o += part.length
  }
  out.set(header, o)
  o += header.length
  const view = new DataView(out.buffer)
  view.setUint32(o, header.length, true)
  view.setUint32(o + 4, crc32(header), true)
  out.set(encoder.encode(END), o + 8)
  return out
}

// Bytes of `value` as an unsigned LEB128 varint.
const varintSize = (value: number): number => {
  let n = 1
  for (let v = value; v >= 0x80; v = Math.floor(v / 128)) n++
  return n
}

// Bytes of one term's run (see `writeRun`).
const runSize = (p: Packed, from: number, to: number): number => {
  let n = 0
  let previous = 0
  for (let i = from; i < to; i += 2) {
    const d = p.postings[i] ?? 0
    n += varintSize(d - previous) + varintSize(p.postings[i + 1] ?? 0) + varintSize(p.docLength[d] ?? 0)
    previous = d
  }
  return n
}

// Writes `value` as an unsigned LEB128 varint at `at`; returns the offset after it.
const putVarint = (out: Uint8Array, at: number, value: number): number => {
  let o = at
  let v = value
  while (v >= 0x80) {
    out[o++] = (v & 0x7f) | 0x80
    v = Math.floor(v / 128)
  }
  out[o++] = v
  return o
}

// One term's postings as unsigned LEB128 varints written into `out` at `at` (returns the end):
// document delta (from the previous document, the first from 0), tf, document length. Typical
// postings take 3 bytes instead of 12.
const writeRun = (p: Packed, from: number, to: number, out: Uint8Array, at: number): number => {
  let o = at
  let previous = 0
  for (let i = from; i < to; i += 2) {
    const d = p.postings[i] ?? 0
    o = putVarint(out, o, d - previous)
    o = putVarint(out, o, p.postings[i + 1] ?? 0)
    o = putVarint(out, o, p.docLength[d] ?? 0)
    previous = d
  }
  return o
}

const parseText: (text: string) => unknown = UndefinedOr.liftThrowable((text: string): unknown => JSON.parse(text))
const decodeText: (bytes: Uint8Array) => string | undefined = UndefinedOr.liftThrowable((bytes: Uint8Array) =>
  decoder.decode(bytes)
)

// A block that passed its CRC but is not JSON is damage all the same: `undefined`.
const parseJson = (bytes: Uint8Array): unknown => {
  const text = decodeText(bytes)
  return text === undefined ? undefined : parseText(text)
}

const isInt = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 0
const isArr = (u: unknown): u is ReadonlyArray<unknown> => Array.isArray(u)

/** Where the footer of a file of `size` bytes starts (the last {@link FOOTER} bytes). */
export const footerRange = (size: number): readonly [number, number] => [Math.max(0, size - FOOTER), size]

/**
 * The header length a footer announces (read the `[size - FOOTER - length, size - FOOTER)` bytes
 * next), or `undefined` when the footer is not one (a truncated or foreign file).
 */
export const headerLength = (footer: Uint8Array): { readonly length: number; readonly crc: number } | undefined => {
  if (footer.length !== FOOTER || decodeText(footer.subarray(8)) !== END) return undefined
  const view = new DataView(footer.buffer, footer.byteOffset, footer.byteLength)
  return { length: view.getUint32(0, true), crc: view.getUint32(4, true) }
}

/**
 * Decodes and checks a segment header read from a file of `size` bytes: its CRC, scope, size and
 * every reference's bounds (a header whose blocks point outside the file is rejected).
 */
export const decodeHeader = (
  scope: string,
  size: number,
  bytes: Uint8Array,
  crc: number
): SegmentHeader | undefined => {
  if (crc32(bytes) !== crc) return undefined
  const h = parseJson(bytes)
  if (typeof h !== "object" || h === null) return undefined
  if (!("v" in h && "scope" in h && "size" in h && "blocks" in h && "docBlocks" in h && "docs" in h)) return undefined
  if (!("postings" in h && "sessions" in h && "totalLength" in h && "snippetBlocks" in h)) return undefined
  if (h.v !== 1 || h.scope !== scope || Number(h.size) !== size) return undefined
  const { blocks, docBlocks, docs, postings, sessions, snippetBlocks, totalLength } = h
  if (!isArr(snippetBlocks)) return undefined
  if (!isInt(docs) || !isInt(postings) || !isInt(totalLength) || !isArr(sessions)) return undefined
  if (!isArr(blocks) || !isArr(docBlocks)) return undefined
  const end = size - FOOTER - bytes.length
  // Indexed loops, no destructuring: a one-shot search decodes 24 headers of about a thousand
  // rows each before V8 has optimised anything, and array destructuring runs the iterator
  // protocol per row there (two thirds of opening a 20 000-session index).
  const refs = (rows: ReadonlyArray<unknown>, first: number): Array<BlockRef> | undefined => {
    const out: Array<BlockRef> = []
    for (let i = 0; i < rows.length; i++) {
      const b = rows[i]
      if (!isArr(b)) return undefined
      const o = b[first]
      const l = b[first + 1]
      const c = b[first + 2]
      if (!isInt(o) || !isInt(l) || !isInt(c) || o + l > end) return undefined
      out.push({ offset: o, length: l, crc: c })
    }
    return out
  }
  const outSessions: Array<SegmentSession> = []
  let covered = 0
  for (let i = 0; i < sessions.length; i++) {
    const s = sessions[i]
    if (!isArr(s)) return undefined
    const name = s[0]
    const sig = s[1]
    const start = s[2]
    const count = s[3]
    const length = s[4]
    if (typeof name !== "string" || typeof sig !== "string" || !isInt(start) || !isInt(count) || !isInt(length)) {
      return undefined
    }
    if (start !== covered) return undefined
    covered += count
    outSessions.push({ name, sig, start, count, length })
  }
  if (covered !== docs) return undefined
  const blockTerms: Array<string> = []
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]
    if (!isArr(b) || typeof b[0] !== "string") return undefined
    blockTerms.push(b[0])
  }
  const outBlocks = refs(blocks, 1)
  const outDocs = refs(docBlocks, 0)
  const outSnippets = refs(snippetBlocks, 0)
  if (outBlocks === undefined || outDocs === undefined || outSnippets === undefined) return undefined
  const blocksNeeded = Math.ceil(docs / DOCS_PER_BLOCK)
  if (outDocs.length !== blocksNeeded || outSnippets.length !== blocksNeeded || postings > end) return undefined
  return {
    scope,
    size,
    docs,
    totalLength,
    sessions: outSessions,
    blockTerms,
    blocks: outBlocks,
    postings,
    docBlocks: outDocs,
    snippetBlocks: outSnippets
  }
}

/** The dictionary block that may hold `term` (the last whose first term is ≤ it), or -1. */
export const blockFor = (header: SegmentHeader, term: string): number => {
  let lo = 0
  let hi = header.blockTerms.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if ((header.blockTerms[mid] ?? "") <= term) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found
}

/** Decodes a dictionary block read from `ref`; `undefined` when it fails its checksum or shape. */
export const decodeTermBlock = (ref: BlockRef, bytes: Uint8Array): ReadonlyArray<TermEntry> | undefined => {
  if (bytes.length !== ref.length || crc32(bytes) !== ref.crc) return undefined
  const rows = parseJson(bytes)
  if (!isArr(rows)) return undefined
  const out: Array<TermEntry> = []
  for (const row of rows) {
    if (!isArr(row)) return undefined
    const [term, offset, length, df, crc] = row
    if (typeof term !== "string" || !isInt(offset) || !isInt(length) || !isInt(df) || !isInt(crc)) return undefined
    out.push({ term, offset, length, df, crc })
  }
  return out
}

/** The byte range of a term's postings. */
export const postingsRange = (header: SegmentHeader, entry: TermEntry): readonly [number, number] => [
  header.postings + entry.offset,
  header.postings + entry.offset + entry.length
]

/**
 * Decodes a term's postings into `doc, tf, length` triples, checking the CRC, that the run holds
 * exactly `df` postings and that every document is in range; `undefined` otherwise.
 */
export const decodePostings = (header: SegmentHeader, entry: TermEntry, bytes: Uint8Array): Int32Array | undefined => {
  if (bytes.length !== entry.length || crc32(bytes) !== entry.crc) return undefined
  const out = new Int32Array(entry.df * 3)
  let at = 0
  let w = 0
  let doc = 0
  while (at < bytes.length && w < out.length) {
    for (let field = 0; field < 3; field++) {
      let value = 0
      let scale = 1
      for (;;) {
        const byte = bytes[at++]
        if (byte === undefined) return undefined
        value += (byte & 0x7f) * scale
        if (byte < 0x80) break
        scale *= 128
        if (scale > 2 ** 35) return undefined
      }
      if (field === 0) {
        doc += value
        if (doc >= header.docs) return undefined
        out[w++] = doc
      } else out[w++] = value
    }
  }
  return at === bytes.length && w === out.length ? out : undefined
}

/** Decodes a document block; `undefined` when it fails its checksum or shape. */
export const decodeDocBlock = (ref: BlockRef, bytes: Uint8Array): ReadonlyArray<SegmentDoc> | undefined => {
  if (bytes.length !== ref.length || crc32(bytes) !== ref.crc) return undefined
  const rows = parseJson(bytes)
  if (!isArr(rows)) return undefined
  const out: Array<SegmentDoc> = []
  for (const row of rows) {
    if (!isArr(row)) return undefined
    const [session, chunk, offset, created] = row
    if (!isInt(session) || typeof chunk !== "number" || typeof offset !== "number") return undefined
    if (!(created === null || typeof created === "number")) return undefined
    out.push({ session, chunk, offset, createdAt: created })
  }
  return out
}

/** Decodes a snippet block (`undefined` entries: none stored); `undefined` when it fails its checks. */
export const decodeSnippetBlock = (
  ref: BlockRef,
  bytes: Uint8Array
): ReadonlyArray<string | undefined> | undefined => {
  if (bytes.length !== ref.length || crc32(bytes) !== ref.crc) return undefined
  const rows = parseJson(bytes)
  if (!isArr(rows)) return undefined
  const out: Array<string | undefined> = []
  for (const row of rows) {
    if (!(row === null || typeof row === "string")) return undefined
    out.push(row ?? undefined)
  }
  return out
}
