/**
 * The on-disk search index of one (sessions root, scope) (docs/search.md#on-disk-index): a manifest
 * naming the live segments and, per segment, the sessions deleted from it, plus the immutable
 * segment files it names (`segmentFile.ts`). A query reads each live segment's dictionary block and
 * postings for its terms only, combines the corpus statistics exactly (N and total length summed
 * over live documents, df over live postings) and scores with the domain's BM25 functions, so its
 * results equal those of one in-memory index of the same documents, bit for bit.
 *
 * Updating: changed and new sessions are packed into new small segments (flushed every
 * {@link FLUSH_DOCS} documents, so a build holds at most that many documents in memory), their old
 * versions and removed sessions go into the deletion set, and when more than {@link MAX_SEGMENTS}
 * segments are live the smallest are merged (up to {@link MAX_MERGE_DOCS} live documents).
 *
 * **Gotchas**: the manifest is the commit point — segments are written (temp, fsync, rename)
 * before the manifest that names them, and unreferenced segment files are removed only after a
 * manifest commit, so a crash at any instant leaves the previous manifest and all its segments.
 * Two processes updating at once: the last manifest wins and its files are kept; the other
 * process's segments may be removed under it, which its next read sees as a damaged segment and
 * rebuilds. Any block failing its checksum fails the query with `SegmentCorrupt`; the caller
 * drops that segment and re-indexes its sessions.
 */
import {
  bm25Idf,
  bm25Term,
  bm25TermBound,
  compareRanked,
  keepsScore,
  MAX_RECENCY_MULTIPLIER,
  recencyMultiplier,
  tokenize
} from "@logbook/domain"
import { childPath, SessionFs } from "@logbook/store"
import { Effect, Option, Result, Schema } from "effect"
import { makeLargest } from "./largest.ts"
import type { Hit, Packed, QueryOptions } from "./searchIndex.ts"
import type { BlockRef, SegmentDoc, SegmentHeader, TermEntry } from "./segmentFile.ts"
import {
  blockFor,
  decodeDocBlock,
  decodeHeader,
  decodePostings,
  decodeSnippetBlock,
  decodeTermBlock,
  DOCS_PER_BLOCK,
  encodeSegment,
  footerRange,
  headerLength,
  postingsRange,
  SegmentCorrupt
} from "./segmentFile.ts"

/** Documents a build packs into one new segment before writing it (the build's memory bound). */
export const FLUSH_DOCS = 8_192
/** More live segments than this and the smallest are merged. */
export const MAX_SEGMENTS = 16
/** A merge never produces a segment of more live documents than this (its memory bound). */
export const MAX_MERGE_DOCS = 65_536

const EPS = 1e-9
// Bytes of a segment's tail read to open it: the footer and, for segments of up to tens of
// thousands of documents, the header too.
const HEADER_READ = 256 * 1024

const Manifest = Schema.Struct({
  format: Schema.Literal("logbook-search-manifest"),
  version: Schema.Literal(1),
  scope: Schema.String,
  generation: Schema.Int,
  segments: Schema.Array(Schema.Struct({ file: Schema.String, docs: Schema.Int })),
  deleted: Schema.Record(Schema.String, Schema.Array(Schema.String))
})
type Manifest = typeof Manifest.Type
const decodeManifest = Schema.decodeUnknownResult(Schema.fromJsonString(Manifest))
const utf8 = new TextDecoder("utf-8")

/** A live segment: its header, the sessions deleted from it and the live totals. */
export interface OpenSegment {
  readonly file: string
  readonly path: string
  readonly header: SegmentHeader
  readonly deleted: Set<string>
  /** 1 per deleted document (undefined: none deleted). */
  dead: Uint8Array | undefined
  liveDocs: number
  liveLength: number
}

/** The state of one on-disk index as this process knows it. */
export class SegmentedIndex {
  readonly root: string
  readonly scope: string
  generation = 0
  segments: Array<OpenSegment> = []
  /** Every indexed session: its segment and signature. */
  readonly sessionAt = new Map<string, { readonly segment: OpenSegment; readonly sig: string }>()
  /** Segment files this state has named, live or not yet removed since they stopped being live. */
  readonly known = new Set<string>()
  constructor(root: string, scope: string) {
    this.root = root
    this.scope = scope
  }

  /** The file name of the manifest (what `searchSnapshotName` names). */
  get manifestPath(): string {
    return childPath(this.root, `.logbook-search-${this.scope}.idx`)
  }

  /** Number of live documents. */
  get size(): number {
    let n = 0
    for (const s of this.segments) n += s.liveDocs
    return n
  }

  /** The signature a session was indexed with, if indexed. */
  signature(name: string): string | undefined {
    return this.sessionAt.get(name)?.sig
  }

  /** Deletes a session from whichever segment holds it (in memory; committed with the manifest). */
  remove(name: string): void {
    const at = this.sessionAt.get(name)
    if (at === undefined) return
    this.sessionAt.delete(name)
    markDeleted(at.segment, name)
    if (at.segment.liveDocs === 0 && at.segment.deleted.size >= at.segment.header.sessions.length) {
      this.segments = this.segments.filter((s) => s !== at.segment)
    }
  }

  /** Adds a segment as live, after deleting older copies of its sessions. */
  add(segment: OpenSegment): void {
    for (const s of segment.header.sessions) {
      if (segment.deleted.has(s.name)) continue
      this.remove(s.name)
      this.sessionAt.set(s.name, { segment, sig: s.sig })
    }
    this.segments.push(segment)
    this.known.add(segment.file)
  }

  /** Drops a segment whose files failed a check: its sessions are no longer indexed. */
  drop(file: string): void {
    const gone = this.segments.find((s) => s.file === file)
    if (gone === undefined) return
    this.segments = this.segments.filter((s) => s !== gone)
    for (const s of gone.header.sessions) {
      if (this.sessionAt.get(s.name)?.segment === gone) this.sessionAt.delete(s.name)
    }
  }

  /** The manifest that describes this state. */
  manifest(): Manifest {
    const deleted: Record<string, Array<string>> = {}
    for (const s of this.segments) if (s.deleted.size > 0) deleted[s.file] = [...s.deleted].sort()
    return {
      format: "logbook-search-manifest",
      version: 1,
      scope: this.scope,
      generation: this.generation,
      segments: this.segments.map((s) => ({ file: s.file, docs: s.header.docs })),
      deleted
    }
  }
}

const markDeleted = (segment: OpenSegment, name: string): void => {
  if (segment.deleted.has(name)) return
  const s = segment.header.sessions.find((x) => x.name === name)
  if (s === undefined) return
  segment.deleted.add(name)
  if (segment.dead === undefined) segment.dead = new Uint8Array(segment.header.docs)
  segment.dead.fill(1, s.start, s.start + s.count)
  segment.liveDocs -= s.count
  segment.liveLength -= s.length
}

/** Whether `file` is a segment file name of `scope` (so a manifest can never name another path). */
export const isSegmentName = (scope: string, file: string): boolean =>
  file.startsWith(`.logbook-search-${scope}-`) && file.endsWith(".seg") && /^[.a-z0-9-]+$/.test(file)

const openSegmentFrom = (index: SegmentedIndex, file: string, header: SegmentHeader): OpenSegment => ({
  file,
  path: childPath(index.root, file),
  header,
  deleted: new Set(),
  dead: undefined,
  liveDocs: header.docs,
  liveLength: header.totalLength
})

/** Reads and checks a segment's footer and header; `undefined` when missing, truncated or damaged. */
const readHeader = (index: SegmentedIndex, file: string) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const path = childPath(index.root, file)
    const info = yield* fs.lstat(path)
    if (Option.isNone(info) || info.value.type !== "File") return undefined
    const size = info.value.size
    // One read of the file's tail holds the footer and, usually, the whole header.
    const tailStart = Math.max(0, size - HEADER_READ)
    const tail = yield* fs.readRange(path, tailStart, size)
    const [from, to] = footerRange(size)
    const footer = headerLength(tail.subarray(from - tailStart, to - tailStart))
    if (footer === undefined || footer.length > from) return undefined
    const bytes = from - footer.length >= tailStart
      ? tail.subarray(from - footer.length - tailStart, from - tailStart)
      : yield* fs.readRange(path, from - footer.length, from)
    return decodeHeader(index.scope, size, bytes, footer.crc)
  }).pipe(Effect.catch(() => Effect.succeed(undefined)))

/**
 * Opens the index of (`root`, `scope`) from its manifest: every named segment whose header checks
 * out becomes live with its deletions; a segment that does not is left out (its sessions are
 * re-indexed by the next refresh). `loaded` is false when there is no valid manifest.
 */
export const openIndex = (root: string, scope: string) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const index = new SegmentedIndex(root, scope)
    const bytes = yield* fs.readFileNoFollow(index.manifestPath).pipe(
      Effect.catch(() => Effect.succeed(Option.none<Uint8Array>()))
    )
    const decoded = Option.isNone(bytes) ? undefined : decodeManifest(utf8.decode(bytes.value))
    if (decoded === undefined || Result.isFailure(decoded) || decoded.success.scope !== scope) {
      return { index, loaded: false }
    }
    const manifest = decoded.success
    index.generation = manifest.generation
    for (const entry of manifest.segments) {
      if (!isSegmentName(scope, entry.file)) continue
      const header = yield* readHeader(index, entry.file)
      if (header === undefined) continue
      const segment = openSegmentFrom(index, entry.file, header)
      for (const name of manifest.deleted[entry.file] ?? []) markDeleted(segment, name)
      index.add(segment)
    }
    return { index, loaded: true }
  })

/** Writes `packed` as a new segment file (not yet live: see {@link commit}). */
export const writeSegment = (index: SegmentedIndex, packed: Packed) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    index.generation++
    const file = `.logbook-search-${index.scope}-${index.generation}-${fs.pid}.seg`
    const bytes = encodeSegment(index.scope, packed)
    yield* fs.writeAtomic(childPath(index.root, file), bytes)
    const [from, to] = footerRange(bytes.length)
    const footer = headerLength(bytes.subarray(from, to))
    const header = footer === undefined
      ? undefined
      : decodeHeader(index.scope, bytes.length, bytes.subarray(from - footer.length, from), footer.crc)
    if (header === undefined) {
      return yield* new SegmentCorrupt({ operation: "writeSegment", path: file, detail: "does not decode" })
    }
    return openSegmentFrom(index, file, header)
  })

/**
 * Commits the state: writes the manifest atomically, then removes the segment files this state
 * named and no longer does (never before: the previous manifest stays whole until the rename).
 * With `sweep`, every segment file of the scope the manifest does not name goes too (leftovers of
 * a crashed or concurrent build), which lists the sessions root: a build commits after every flush
 * and merge, and listing 20 000 session directories each time was a fiftieth of a full build.
 */
export const commit = (index: SegmentedIndex, options: { readonly sweep?: boolean } = {}) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    yield* fs.writeAtomic(index.manifestPath, JSON.stringify(index.manifest()))
    const live = new Set(index.segments.map((s) => s.file))
    for (const file of [...index.known]) {
      if (live.has(file)) continue
      index.known.delete(file)
      yield* Effect.ignore(fs.removeFile(childPath(index.root, file)))
    }
    if (options.sweep === true) yield* removeUnreferenced(index)
  })

/** Removes the scope's segment files the state does not name (best effort). */
export const removeUnreferenced = (index: SegmentedIndex) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const live = new Set(index.segments.map((s) => s.file))
    const names = yield* fs.listDir(index.root)
    for (const name of names) {
      if (isSegmentName(index.scope, name) && !live.has(name)) {
        yield* Effect.ignore(fs.removeFile(childPath(index.root, name)))
      }
    }
  }).pipe(Effect.ignore)

const corrupt = (segment: OpenSegment, operation: string, detail: string) =>
  new SegmentCorrupt({ operation, path: segment.path, detail })

const readBlock = (segment: OpenSegment, start: number, end: number, operation: string) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    return yield* fs.readRange(segment.path, start, end).pipe(
      Effect.mapError((e) => corrupt(segment, operation, e.message))
    )
  })

const lookupTerm = (
  segment: OpenSegment,
  term: string,
  blocks: Map<number, ReadonlyArray<TermEntry>>
) =>
  Effect.gen(function*() {
    const b = blockFor(segment.header, term)
    if (b < 0) return undefined
    let entries = blocks.get(b)
    if (entries === undefined) {
      const ref = segment.header.blocks[b]
      if (ref === undefined) return undefined
      entries = decodeTermBlock(ref, yield* readBlock(segment, ref.offset, ref.offset + ref.length, "readTerms"))
      if (entries === undefined) return yield* corrupt(segment, "readTerms", "dictionary block fails its checksum")
      blocks.set(b, entries)
    }
    let lo = 0
    let hi = entries.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      const at = entries[mid]
      if (at === undefined) break
      if (at.term === term) return at
      if (at.term < term) lo = mid + 1
      else hi = mid - 1
    }
    return undefined
  })

const readPostings = (segment: OpenSegment, entry: TermEntry) =>
  Effect.gen(function*() {
    const [from, to] = postingsRange(segment.header, entry)
    const postings = decodePostings(segment.header, entry, yield* readBlock(segment, from, to, "readPostings"))
    if (postings === undefined) return yield* corrupt(segment, "readPostings", "postings fail their checksum")
    return postings
  })

// Bytes a merge reads of a segment's postings at once. Runs are laid out in dictionary order, so a
// merge, which reads every run in that order, reads the region in a few windows instead of one
// open, read and close per term (20 000 terms × every merged segment: a tenth of a full build).
export const POSTINGS_WINDOW = 1024 * 1024

/**
 * A reader of one segment's postings for runs asked for in ascending offset order: each read
 * holds the next `windowBytes` (or one run, when longer), so memory stays bounded by one window
 * whatever the segment's size. Runs asked out of order are correct, only slower (a read each).
 */
const makePostingsReader = (segment: OpenSegment, windowBytes: number) => {
  let windowStart = 0
  let window: Uint8Array = new Uint8Array(0)
  const end = segment.header.size
  return (entry: TermEntry) =>
    Effect.gen(function*() {
      const [from, to] = postingsRange(segment.header, entry)
      if (from < windowStart || to > windowStart + window.length) {
        windowStart = from
        window = yield* readBlock(segment, from, Math.min(end, Math.max(to, from + windowBytes)), "readPostings")
      }
      const postings = decodePostings(
        segment.header,
        entry,
        window.subarray(from - windowStart, to - windowStart)
      )
      if (postings === undefined) return yield* corrupt(segment, "readPostings", "postings fail their checksum")
      return postings
    })
}

/**
 * The rows of the block holding document `d` (blocks of `DOCS_PER_BLOCK`), read, checked and
 * decoded once per search and kept in `cache`: a query's candidates cluster in few blocks.
 */
const cachedBlock = <Row>(
  segment: OpenSegment,
  d: number,
  cache: Map<string, ReadonlyArray<Row>>,
  what: { readonly refs: ReadonlyArray<BlockRef>; readonly operation: string; readonly failed: string },
  decode: (ref: BlockRef, bytes: Uint8Array) => ReadonlyArray<Row> | undefined
) =>
  Effect.gen(function*() {
    const b = Math.floor(d / DOCS_PER_BLOCK)
    const key = `${segment.file}\0${b}`
    let rows = cache.get(key)
    if (rows === undefined) {
      const ref = what.refs[b]
      if (ref === undefined) return yield* corrupt(segment, what.operation, "document out of range")
      rows = decode(ref, yield* readBlock(segment, ref.offset, ref.offset + ref.length, what.operation))
      if (rows === undefined) return yield* corrupt(segment, what.operation, what.failed)
      cache.set(key, rows)
    }
    return rows[d - b * DOCS_PER_BLOCK]
  })

const readDoc = (segment: OpenSegment, d: number, cache: Map<string, ReadonlyArray<SegmentDoc>>) =>
  Effect.gen(function*() {
    const doc = yield* cachedBlock(segment, d, cache, {
      refs: segment.header.docBlocks,
      operation: "readDocs",
      failed: "document block fails its checksum"
    }, decodeDocBlock)
    if (doc === undefined || segment.header.sessions[doc.session] === undefined) {
      return yield* corrupt(segment, "readDocs", "document block does not match the header")
    }
    return doc
  })

const readSnippet = (segment: OpenSegment, d: number, cache: Map<string, ReadonlyArray<string | undefined>>) =>
  cachedBlock(segment, d, cache, {
    refs: segment.header.snippetBlocks,
    operation: "readSnippets",
    failed: "snippet block fails its checksum"
  }, decodeSnippetBlock)

/**
 * Ranks `query` over the live documents of every segment: exactly the scores and order of a
 * full BM25 scoring of one index holding the same documents (statistics over live documents,
 * contributions summed in query order, the recency multiplier, ties by chunk id). Common terms
 * are only looked up for the candidates of the rare ones once nothing else can reach the top k
 * (`prunedCandidates`); document fields are read only for candidates whose score bound can still
 * enter the top k.
 */
export const searchSegments = (index: SegmentedIndex, query: string, options: QueryOptions) =>
  Effect.gen(function*() {
    const tokens = tokenize(query)
    const n = index.size
    if (tokens.length === 0 || n === 0 || options.maxResults <= 0) return []
    let totalLength = 0
    for (const s of index.segments) totalLength += s.liveLength
    const avgdl = totalLength / n
    const positions = new Map<string, Array<number>>()
    tokens.forEach((t, i) => {
      const list = positions.get(t)
      if (list === undefined) positions.set(t, [i])
      else list.push(i)
    })
    // First the live df of every term: the dictionary's df, or for a segment with deletions its
    // postings counted without the deleted documents.
    const entries: Array<Map<string, TermEntry>> = []
    const df = new Map<string, number>()
    for (const segment of index.segments) {
      const own = new Map<string, TermEntry>()
      entries.push(own)
      if (segment.liveDocs === 0) continue
      const blocks = new Map<number, ReadonlyArray<TermEntry>>()
      for (const term of positions.keys()) {
        const entry = yield* lookupTerm(segment, term, blocks)
        if (entry === undefined) continue
        let live = entry.df
        const dead = segment.dead
        if (dead !== undefined) {
          const postings = yield* readPostings(segment, entry)
          live = 0
          for (let i = 0; i < postings.length; i += 3) if (dead[postings[i] ?? 0] !== 1) live++
        }
        if (live === 0) continue
        own.set(term, entry)
        df.set(term, (df.get(term) ?? 0) + live)
      }
    }
    if (df.size === 0) return []
    const k = options.maxResults
    const pruned = yield* prunedCandidates(index, tokens, entries, df, n, avgdl, k)
    const candSeg: Array<number> = []
    const candDoc: Array<number> = []
    const candLex: Array<number> = []
    const keep = (floor: number, si: number, d: number, lex: number): void => {
      const bound = lex * MAX_RECENCY_MULTIPLIER * (1 + EPS)
      if (lex > 0 && bound >= floor && bound >= options.minScore) {
        candSeg.push(si)
        candDoc.push(d)
        candLex.push(lex)
      }
    }
    if (pruned !== undefined) {
      // Every top-k document is among the candidates, and the k-th largest lexical score is theirs.
      const top = makeLargest(k)
      for (const lex of pruned.lex) if (lex > 0) top.offer(lex)
      const floor = top.size() < k ? 0 : top.min()
      pruned.lex.forEach((lex, i) => keep(floor, pruned.seg[i] ?? 0, pruned.doc[i] ?? 0, lex))
    } else {
      // Each query position in order, one postings run at a time, added into a dense lexical
      // score per document: the sum in query order from 0 that a full scoring computes (a document
      // without the term adds nothing, exactly as adding 0 would), bit for bit.
      const lexicalOf: Array<Float64Array | undefined> = index.segments.map(() => undefined)
      for (const token of tokens) {
        const total = df.get(token)
        if (total === undefined) continue
        const idf = bm25Idf(n, total)
        for (let si = 0; si < index.segments.length; si++) {
          const segment = index.segments[si]
          const entry = entries[si]?.get(token)
          if (segment === undefined || entry === undefined) continue
          let lexical = lexicalOf[si]
          if (lexical === undefined) lexicalOf[si] = lexical = new Float64Array(segment.header.docs)
          const postings = yield* readPostings(segment, entry)
          const dead = segment.dead
          for (let i = 0; i < postings.length; i += 3) {
            const d = postings[i] ?? 0
            if (dead !== undefined && dead[d] === 1) continue
            lexical[d] = (lexical[d] ?? 0) + bm25Term(idf, postings[i + 1] ?? 0, postings[i + 2] ?? 0, avgdl)
          }
        }
      }
      // Every top-k document scores at least the k-th largest lexical score (the multiplier is ≥ 1).
      const floor = kthLargest(lexicalOf, k)
      lexicalOf.forEach((lexical, si) => {
        if (lexical === undefined) return
        for (let d = 0; d < lexical.length; d++) keep(floor, si, d, lexical[d] ?? 0)
      })
    }
    const order = candLex.map((_, i) => i)
    order.sort((x, y) => (candLex[y] ?? 0) - (candLex[x] ?? 0))
    const lexical = candLex
    const docCache = new Map<string, ReadonlyArray<SegmentDoc>>()
    const top: Array<Hit> = []
    const at = new Map<Hit, readonly [OpenSegment, number]>()
    for (const s of order) {
      const lex = lexical[s] ?? 0
      const last = top.length >= k ? top[k - 1] : undefined
      if (last !== undefined && lex * MAX_RECENCY_MULTIPLIER * (1 + EPS) < last.score) break
      const segment = index.segments[candSeg[s] ?? 0]
      if (segment === undefined) continue
      const d = candDoc[s] ?? 0
      const doc = yield* readDoc(segment, d, docCache)
      const score = lex * recencyMultiplier(doc.createdAt, options.now)
      if (!keepsScore(score, options.minScore)) continue
      const session = segment.header.sessions[doc.session]?.name ?? ""
      const hit: Hit = {
        session,
        chunk: doc.chunk,
        offset: doc.offset,
        createdAt: doc.createdAt,
        snippet: undefined,
        chunkId: `${session}:${doc.chunk}`,
        score
      }
      let lo = 0
      let hi = top.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        const at = top[mid]
        if (at !== undefined && compareRanked(at, hit) <= 0) lo = mid + 1
        else hi = mid
      }
      top.splice(lo, 0, hit)
      at.set(hit, [segment, d])
      if (top.length > k) top.pop()
    }
    const snippets = new Map<string, ReadonlyArray<string | undefined>>()
    const out: Array<Hit> = []
    for (const hit of top) {
      const place = at.get(hit)
      out.push(place === undefined ? hit : { ...hit, snippet: yield* readSnippet(place[0], place[1], snippets) })
    }
    return out
  })

// Postings the essential terms of a pruned query may have; past that, scoring everything densely is cheaper.
const MAX_ESSENTIAL_POSTINGS = 65_536

/** The postings triple index of document `d` in `postings` (doc, tf, length), or -1 (binary search). */
const findDoc = (postings: Int32Array, d: number): number => {
  let lo = 0
  let hi = postings.length / 3 - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const doc = postings[3 * mid] ?? 0
    if (doc === d) return 3 * mid
    if (doc < d) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

/**
 * Top-k without scoring every posting of common words (MaxScore): terms are taken by their score
 * bound (`bm25TermBound`, the most one query position can add: rare terms first). The essential
 * terms' postings are scored; once the k-th best partial score of the documents seen beats what
 * the other terms together could give a document not seen (times the largest recency
 * multiplier), no other document can reach the top k, and the other terms are only looked up for
 * the documents seen. Each candidate's contributions are kept per query position and summed in
 * query order from 0, the sum the dense scoring computes, bit for bit. `undefined` when no such
 * point comes before the essential terms hold {@link MAX_ESSENTIAL_POSTINGS} postings (the caller
 * scores densely). Candidates come in (segment, document) order, as the dense scoring lists them.
 */
const prunedCandidates = (
  index: SegmentedIndex,
  tokens: ReadonlyArray<string>,
  entries: ReadonlyArray<Map<string, TermEntry>>,
  df: ReadonlyMap<string, number>,
  n: number,
  avgdl: number,
  k: number
) =>
  Effect.gen(function*() {
    const q = tokens.length
    const terms: Array<{ term: string; positions: Array<number>; idf: number; bound: number; total: number }> = []
    tokens.forEach((term, position) => {
      const total = df.get(term)
      if (total === undefined) return
      const known = terms.find((t) => t.term === term)
      if (known !== undefined) {
        known.positions.push(position)
        known.bound += bm25TermBound(known.idf)
        return
      }
      const idf = bm25Idf(n, total)
      terms.push({ term, positions: [position], idf, bound: bm25TermBound(idf), total })
    })
    terms.sort((a, b) => b.bound - a.bound)
    let rest = 0
    for (const t of terms) rest += t.bound
    // The candidates, flat: slot i is document `slotDoc[i]` of the segment whose map holds it, its
    // contribution at query position p in `contrib[i * q + p]` (0 until the term is looked up:
    // what an absent term adds). One object per candidate was most of a common query's garbage.
    const slotOf: Array<Map<number, number>> = index.segments.map(() => new Map())
    const slotDoc: Array<number> = []
    let contrib = new Float64Array(q * 1024)
    const slotFor = (map: Map<number, number>, d: number): number => {
      let slot = map.get(d)
      if (slot !== undefined) return slot
      slot = slotDoc.length
      map.set(d, slot)
      slotDoc.push(d)
      if ((slot + 1) * q > contrib.length) {
        const grown = new Float64Array(contrib.length * 2)
        grown.set(contrib)
        contrib = grown
      }
      return slot
    }
    const partial = (slot: number): number => {
      let sum = 0
      for (let p = slot * q; p < slot * q + q; p++) sum += contrib[p] ?? 0
      return sum
    }
    let essential = 0
    let postingsSeen = 0
    let prunedAt = -1
    while (essential < terms.length) {
      const t = terms[essential]
      if (t === undefined) break
      postingsSeen += t.total
      if (postingsSeen > MAX_ESSENTIAL_POSTINGS) return undefined
      for (let si = 0; si < index.segments.length; si++) {
        const segment = index.segments[si]
        const entry = entries[si]?.get(t.term)
        const map = slotOf[si]
        if (segment === undefined || entry === undefined || map === undefined) continue
        const postings = yield* readPostings(segment, entry)
        const dead = segment.dead
        for (let i = 0; i < postings.length; i += 3) {
          const d = postings[i] ?? 0
          if (dead !== undefined && dead[d] === 1) continue
          const base = slotFor(map, d) * q
          const v = bm25Term(t.idf, postings[i + 1] ?? 0, postings[i + 2] ?? 0, avgdl)
          for (const p of t.positions) contrib[base + p] = v
        }
      }
      rest -= t.bound
      essential++
      if (essential === terms.length) {
        prunedAt = essential
        break
      }
      const top = makeLargest(k)
      for (let slot = 0; slot < slotDoc.length; slot++) top.offer(partial(slot))
      const theta = top.size() < k ? 0 : top.min()
      if (theta > 0 && Math.max(rest, 0) * MAX_RECENCY_MULTIPLIER * (1 + EPS) < theta * (1 - EPS)) {
        prunedAt = essential
        break
      }
    }
    if (prunedAt < 0) return undefined
    // The other terms, looked up for the candidates only.
    for (const t of terms.slice(prunedAt)) {
      for (let si = 0; si < index.segments.length; si++) {
        const segment = index.segments[si]
        const entry = entries[si]?.get(t.term)
        const map = slotOf[si]
        if (segment === undefined || entry === undefined || map === undefined || map.size === 0) continue
        const postings = yield* readPostings(segment, entry)
        const dead = segment.dead
        for (const [d, slot] of map) {
          if (dead !== undefined && dead[d] === 1) continue
          const at = findDoc(postings, d)
          if (at < 0) continue
          const v = bm25Term(t.idf, postings[at + 1] ?? 0, postings[at + 2] ?? 0, avgdl)
          for (const p of t.positions) contrib[slot * q + p] = v
        }
      }
    }
    // In (segment, document) order: per segment, a numeric sort of (document, slot) packed in one
    // double each (slots ≤ MAX_ESSENTIAL_POSTINGS < 2^17, so documents may reach 2^36).
    const seg: Array<number> = []
    const doc: Array<number> = []
    const lex: Array<number> = []
    slotOf.forEach((map, si) => {
      const keys = new Float64Array(map.size)
      let w = 0
      for (const [d, slot] of map) keys[w++] = d * 2 ** 17 + slot
      keys.sort()
      for (const key of keys) {
        const slot = key % 2 ** 17
        // In query order from 0: what adding each present term's contribution gives (absent ones add 0).
        seg.push(si)
        doc.push(slotDoc[slot] ?? 0)
        lex.push(partial(slot))
      }
    })
    return { seg, doc, lex }
  })

// The k-th largest positive value of all arrays; 0 when there are fewer than k (nothing is safe to skip then).
const kthLargest = (arrays: ReadonlyArray<Float64Array | undefined>, k: number): number => {
  const top = makeLargest(k)
  for (const values of arrays) {
    if (values === undefined) continue
    for (const v of values) if (v > 0) top.offer(v)
  }
  return top.size() < k ? 0 : top.min()
}

/**
 * Reads a whole segment's live documents back as packed arrays (for a merge): documents
 * renumbered without the deleted sessions, every block checked, the postings read
 * `windowBytes` at a time.
 */
export const readPacked = (segment: OpenSegment, windowBytes: number = POSTINGS_WINDOW) =>
  Effect.gen(function*() {
    const h = segment.header
    const remap = new Int32Array(h.docs).fill(-1)
    const sessionNames: Array<string> = []
    const sessionSigs: Array<string> = []
    const sessionStart: Array<number> = [0]
    const localOf = new Int32Array(h.sessions.length).fill(-1)
    let next = 0
    h.sessions.forEach((s, i) => {
      if (segment.deleted.has(s.name)) return
      localOf[i] = sessionNames.length
      for (let d = s.start; d < s.start + s.count; d++) remap[d] = next++
      sessionNames.push(s.name)
      sessionSigs.push(s.sig)
      sessionStart.push(next)
    })
    const docSession = new Int32Array(next)
    const docChunk = new Int32Array(next)
    const docLength = new Int32Array(next)
    const docOffset = new Float64Array(next)
    const docCreated = new Float64Array(next)
    const docSnippet: Array<string> = new Array<string>(next).fill("")
    let withSnippets = false
    const cache = new Map<string, ReadonlyArray<SegmentDoc>>()
    const snippets = new Map<string, ReadonlyArray<string | undefined>>()
    for (let d = 0; d < h.docs; d++) {
      const nd = remap[d] ?? -1
      if (nd < 0) continue
      const doc = yield* readDoc(segment, d, cache)
      if (d % DOCS_PER_BLOCK === DOCS_PER_BLOCK - 1) {
        cache.clear()
        snippets.clear()
      }
      docSession[nd] = localOf[doc.session] ?? 0
      docChunk[nd] = doc.chunk
      docOffset[nd] = doc.offset
      docCreated[nd] = doc.createdAt ?? Number.NaN
      const snippet = yield* readSnippet(segment, d, snippets)
      if (snippet !== undefined) {
        withSnippets = true
        docSnippet[nd] = snippet
      }
    }
    const terms: Array<string> = []
    const lists: Array<Int32Array> = []
    let total = 0
    const readRun = makePostingsReader(segment, windowBytes)
    for (let b = 0; b < h.blocks.length; b++) {
      const ref = h.blocks[b]
      if (ref === undefined) continue
      const entries = decodeTermBlock(ref, yield* readBlock(segment, ref.offset, ref.offset + ref.length, "readTerms"))
      if (entries === undefined) return yield* corrupt(segment, "readTerms", "dictionary block fails its checksum")
      for (const entry of entries) {
        const postings = yield* readRun(entry)
        // Written straight into a typed array (a plain array of pairs took twice the memory).
        const kept = new Int32Array((postings.length / 3) * 2)
        let w = 0
        for (let i = 0; i < postings.length; i += 3) {
          const nd = remap[postings[i] ?? 0] ?? -1
          if (nd < 0) continue
          docLength[nd] = postings[i + 2] ?? 0
          kept[w++] = nd
          kept[w++] = postings[i + 1] ?? 0
        }
        if (w === 0) continue
        terms.push(entry.term)
        lists.push(w === kept.length ? kept : kept.slice(0, w))
        total += w
      }
    }
    const termStart = new Int32Array(terms.length + 1)
    const postings = new Int32Array(total)
    let w = 0
    lists.forEach((list, t) => {
      postings.set(list, w)
      w += list.length
      termStart[t + 1] = w
    })
    return {
      terms,
      termStart,
      postings,
      docSession,
      docChunk,
      docLength,
      docOffset,
      docCreated,
      docSnippet: withSnippets ? docSnippet : undefined,
      sessionNames,
      sessionSigs,
      sessionStart: Int32Array.from(sessionStart),
      termMaxTf: new Int32Array(terms.length),
      termMinLen: new Int32Array(terms.length)
    } satisfies Packed
  })

/** Concatenates packed parts: documents and sessions in part order, postings merged per term. */
export const concatPacked = (parts: ReadonlyArray<Packed>): Packed => {
  let docs = 0
  let sessions = 0
  for (const p of parts) {
    docs += p.docChunk.length
    sessions += p.sessionNames.length
  }
  const docSession = new Int32Array(docs)
  const docChunk = new Int32Array(docs)
  const docLength = new Int32Array(docs)
  const docOffset = new Float64Array(docs)
  const docCreated = new Float64Array(docs)
  const withSnippets = parts.some((p) => p.docSnippet !== undefined)
  const docSnippet: Array<string> | undefined = withSnippets ? new Array<string>(docs).fill("") : undefined
  const sessionNames: Array<string> = []
  const sessionSigs: Array<string> = []
  const sessionStart = new Int32Array(sessions + 1)
  const byTerm = new Map<string, Array<{ part: number; t: number }>>()
  const docBase: Array<number> = []
  let d0 = 0
  let s0 = 0
  parts.forEach((p, part) => {
    docBase.push(d0)
    const n = p.docChunk.length
    for (let d = 0; d < n; d++) docSession[d0 + d] = s0 + (p.docSession[d] ?? 0)
    docChunk.set(p.docChunk, d0)
    docLength.set(p.docLength, d0)
    docOffset.set(p.docOffset, d0)
    docCreated.set(p.docCreated, d0)
    if (docSnippet !== undefined) { for (let d = 0; d < n; d++) docSnippet[d0 + d] = p.docSnippet?.[d] ?? "" }
    p.sessionNames.forEach((name, s) => {
      sessionNames.push(name)
      sessionSigs.push(p.sessionSigs[s] ?? "")
      sessionStart[s0 + s + 1] = d0 + (p.sessionStart[s + 1] ?? 0)
    })
    p.terms.forEach((term, t) => {
      const list = byTerm.get(term)
      if (list === undefined) byTerm.set(term, [{ part, t }])
      else list.push({ part, t })
    })
    d0 += n
    s0 += p.sessionNames.length
  })
  const terms = [...byTerm.keys()]
  const termStart = new Int32Array(terms.length + 1)
  let total = 0
  terms.forEach((term, i) => {
    for (const { part, t } of byTerm.get(term) ?? []) {
      const p = parts[part]
      if (p !== undefined) total += (p.termStart[t + 1] ?? 0) - (p.termStart[t] ?? 0)
    }
    termStart[i + 1] = total
  })
  const postings = new Int32Array(total)
  let w = 0
  for (const term of terms) {
    for (const { part, t } of byTerm.get(term) ?? []) {
      const p = parts[part]
      if (p === undefined) continue
      const base = docBase[part] ?? 0
      for (let i = p.termStart[t] ?? 0; i < (p.termStart[t + 1] ?? 0); i += 2) {
        postings[w++] = base + (p.postings[i] ?? 0)
        postings[w++] = p.postings[i + 1] ?? 0
      }
    }
  }
  return {
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
    sessionStart,
    termMaxTf: new Int32Array(terms.length),
    termMinLen: new Int32Array(terms.length)
  }
}

/**
 * Merges the smallest live segments while more than {@link MAX_SEGMENTS} are live (never beyond
 * {@link MAX_MERGE_DOCS} live documents in one merge, nor beyond `budgetDocs`: a small update
 * merges only small segments, so one changed session never waits for a large merge), committing
 * after each merge; returns how many merges ran. `postingsWindow` is how much of a segment's
 * postings a merge reads at once (tests make it tiny to cross windows).
 */
export const mergeSegments = (
  index: SegmentedIndex,
  maxSegments: number = MAX_SEGMENTS,
  budgetDocs: number = MAX_MERGE_DOCS,
  postingsWindow: number = POSTINGS_WINDOW
) =>
  Effect.gen(function*() {
    let merges = 0
    while (index.segments.length > maxSegments) {
      const bySize = [...index.segments].sort((a, b) => a.liveDocs - b.liveDocs)
      const chosen: Array<OpenSegment> = []
      let docs = 0
      for (const s of bySize) {
        if (chosen.length >= 2 && docs + s.liveDocs > MAX_MERGE_DOCS) break
        chosen.push(s)
        docs += s.liveDocs
        if (chosen.length >= 4) break
      }
      if (chosen.length < 2 || docs > Math.min(MAX_MERGE_DOCS, budgetDocs)) break
      const parts: Array<Packed> = []
      for (const s of chosen) parts.push(yield* readPacked(s, postingsWindow))
      const packed = concatPacked(parts)
      // The parts are garbage once concatenated: not kept alive while the merged segment is encoded
      // (they are as large as it is; a full build's peak memory was that merge).
      parts.length = 0
      const merged = yield* writeSegment(index, packed)
      const gone = new Set(chosen)
      index.segments = index.segments.filter((s) => !gone.has(s))
      index.add(merged)
      yield* commit(index)
      merges++
    }
    return merges
  })
