/**
 * `index/turns.bin`, a derived binary copy of `index/turns.json` for large sessions: a 64-byte
 * header and one 64-byte record per turn, so a reader finds turn `n`, the first and the last
 * turns without parsing a JSON document of hundreds of thousands of entries. `turns.json` stays
 * the wire-compatible file every other tool reads and writes; the sidecar is only a cache of it.
 *
 * Never trusted blindly: the header carries the byte length and CRC-32 of the exact
 * `turns.json` it was derived from, the log length it describes and a CRC-32 of its records, so
 * a reader accepts it only when `turns.json` on disk is byte-for-byte that file (checked by
 * streaming it through CRC-32, without decoding it) and the records are intact. Anything else —
 * missing, truncated, corrupt, older than `turns.json`, written for another log length — is
 * ignored, and the reader parses `turns.json` as before; the writer replaces it at its next
 * barrier.
 *
 * Layout (little-endian): header `LBTURNS1`, u32 version 1, u32 record size 64, f64 entry
 * count, f64 first turn number, f64 `turns.json` length, u32 its CRC-32, u32 the CRC-32 of the
 * rest of the sidecar (every byte but these four), f64 the log length the index describes, 8 zero bytes; record: f64 start offset, f64
 * end offset, f64 event count, u8 length of `ts` in UTF-8 bytes, then `ts` (at most 39 bytes).
 * Turn numbers are implied (first + i): the index of a session always rises by one.
 */
import type { TurnEntry, TurnTable } from "@logbook/domain"
import { asTurnTable } from "@logbook/domain"
import { Effect, Option } from "effect"
import { Buffer, isUtf8 } from "node:buffer"
import { crc32 } from "node:zlib"
import type { SessionFsApi } from "../fs/SessionFs.ts"
import type { StoreIoError } from "../fs/StoreError.ts"

/** The sidecar is written (and worth reading) only for indexes above this many entries. */
export const SIDECAR_MIN_ENTRIES = 4096

const MAGIC = "LBTURNS1"
const VERSION = 1
const HEADER_BYTES = 64
const RECORD_BYTES = 64
const TS_MAX_BYTES = RECORD_BYTES - 25

/** Which `turns.json` and which log length a sidecar was derived from. */
export interface SidecarBinding {
  /** Byte length of `turns.json`. */
  readonly jsonBytes: number
  /** CRC-32 of `turns.json`'s bytes. */
  readonly jsonCrc: number
  /** Length of `events.jsonl` the index describes (the manifest's `persisted_file_len`). */
  readonly fileLen: number
}

const utf8 = new TextEncoder()
const LONE_SURROGATE = /\p{Cs}/u

/** CRC-32 of the whole sidecar except its own field (header bytes 44..48). */
const checksum = (bytes: Uint8Array): number => crc32(bytes.subarray(48), crc32(bytes.subarray(0, 44)))
const utf8Decoder = new TextDecoder("utf-8")

const isCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 0

/**
 * Writes records `from..to` of `entries` into `out` (record `from` at offset 0); false when one
 * cannot be represented (see {@link encodeTurnIndexSidecarChunks}).
 */
const encodeRecords = (
  entries: TurnTable,
  first: number,
  from: number,
  to: number,
  out: Uint8Array
): boolean => {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  for (let i = from; i < to; i++) {
    if (entries.turnAt(i) !== first + i) return false
    const start = entries.startAt(i)
    const end = entries.endAt(i)
    const count = entries.eventCountAt(i)
    if (!isCount(start) || !isCount(end) || !isCount(count)) return false
    const text = entries.tsAt(i)
    // A lone surrogate would not read back as the same string.
    if (LONE_SURROGATE.test(text)) return false
    const at = (i - from) * RECORD_BYTES
    out.fill(0, at, at + RECORD_BYTES)
    view.setFloat64(at, start, true)
    view.setFloat64(at + 8, end, true)
    view.setFloat64(at + 16, count, true)
    const ts = utf8.encodeInto(text, out.subarray(at + 25, at + RECORD_BYTES))
    if (ts.read !== text.length) return false
    view.setUint8(at + 24, ts.written)
  }
  return true
}

/** Records per chunk of a streamed sidecar (256 KiB). */
const CHUNK_RECORDS = 4096

/**
 * The sidecar for `entries` as written to `turns.json` (described by `binding`), as chunks of at
 * most 256 KiB (the header first), so a large index never needs one buffer of all of it; or
 * undefined when the entries cannot be represented (turn numbers not rising by one, a count that
 * is not a safe integer, a `ts` longer than 39 UTF-8 bytes or not well-formed): then no sidecar
 * is written and readers parse `turns.json`. The records are encoded twice (once for the
 * checksum in the header, once for output), which costs far less than holding them.
 *
 * **Gotchas**: the chunks are produced lazily from `entries`; do not change them while they
 * are consumed.
 */
export const encodeTurnIndexSidecarChunks = (
  given: ReadonlyArray<TurnEntry> | TurnTable,
  binding: SidecarBinding
): Iterable<Uint8Array> | undefined => {
  const entries = asTurnTable(given)
  const first = entries.length > 0 ? entries.turnAt(0) : 0
  const header = new Uint8Array(HEADER_BYTES)
  const view = new DataView(header.buffer)
  for (let i = 0; i < MAGIC.length; i++) header[i] = MAGIC.charCodeAt(i)
  view.setUint32(8, VERSION, true)
  view.setUint32(12, RECORD_BYTES, true)
  view.setFloat64(16, entries.length, true)
  view.setFloat64(24, first, true)
  view.setFloat64(32, binding.jsonBytes, true)
  view.setUint32(40, binding.jsonCrc >>> 0, true)
  view.setFloat64(48, binding.fileLen, true)
  let crc = crc32(header.subarray(48), crc32(header.subarray(0, 44)))
  const scratch = new Uint8Array(Math.min(entries.length, CHUNK_RECORDS) * RECORD_BYTES)
  for (let from = 0; from < entries.length; from += CHUNK_RECORDS) {
    const to = Math.min(from + CHUNK_RECORDS, entries.length)
    if (!encodeRecords(entries, first, from, to, scratch)) return undefined
    crc = crc32(scratch.subarray(0, (to - from) * RECORD_BYTES), crc)
  }
  view.setUint32(44, crc, true)
  return {
    *[Symbol.iterator]() {
      yield header
      for (let from = 0; from < entries.length; from += CHUNK_RECORDS) {
        const to = Math.min(from + CHUNK_RECORDS, entries.length)
        const chunk = new Uint8Array((to - from) * RECORD_BYTES)
        encodeRecords(entries, first, from, to, chunk)
        yield chunk
      }
    }
  }
}

/** {@link encodeTurnIndexSidecarChunks} as one buffer. */
export const encodeTurnIndexSidecar = (
  entries: ReadonlyArray<TurnEntry> | TurnTable,
  binding: SidecarBinding
): Uint8Array | undefined => {
  const chunks = encodeTurnIndexSidecarChunks(entries, binding)
  return chunks === undefined ? undefined : Buffer.concat([...chunks])
}

/** The binding a sidecar's header claims, or undefined when it is not a sidecar of this version. */
export const sidecarBinding = (bytes: Uint8Array): SidecarBinding | undefined => {
  if (bytes.length < HEADER_BYTES) return undefined
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC.charCodeAt(i)) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.getUint32(8, true) !== VERSION || view.getUint32(12, true) !== RECORD_BYTES) return undefined
  return {
    jsonBytes: view.getFloat64(32, true),
    jsonCrc: view.getUint32(40, true),
    fileLen: view.getFloat64(48, true)
  }
}

const sameBinding = (a: SidecarBinding, b: SidecarBinding): boolean =>
  a.jsonBytes === b.jsonBytes && (a.jsonCrc >>> 0) === (b.jsonCrc >>> 0) && a.fileLen === b.fileLen

/**
 * The table in sidecar `bytes` when it is intact and derived from the `turns.json` and log
 * length of `expected`, else undefined. Every record is checked (counts are safe integers,
 * `ts` fits and is UTF-8), so the table never yields a value `turns.json` could not hold; the
 * index's own validity and consistency are `isTableValid`/`isTableConsistent`'s, as for JSON.
 */
export const decodeTurnIndexSidecar = (bytes: Uint8Array, expected: SidecarBinding): TurnTable | undefined => {
  const binding = sidecarBinding(bytes)
  if (binding === undefined || !sameBinding(binding, expected)) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const length = view.getFloat64(16, true)
  const first = view.getFloat64(24, true)
  if (!isCount(length) || !isCount(first) || bytes.length !== HEADER_BYTES + length * RECORD_BYTES) return undefined
  if (length > 0 && (first < 1 || !isCount(first + length))) return undefined
  if (checksum(bytes) !== view.getUint32(44, true)) return undefined
  for (let i = 0; i < length; i++) {
    const at = HEADER_BYTES + i * RECORD_BYTES
    const tsLen = view.getUint8(at + 24)
    if (!isCount(view.getFloat64(at, true)) || !isCount(view.getFloat64(at + 8, true))) return undefined
    if (!isCount(view.getFloat64(at + 16, true)) || tsLen > TS_MAX_BYTES) return undefined
    if (!isUtf8(bytes.subarray(at + 25, at + 25 + tsLen))) return undefined
  }
  const record = (i: number): number => {
    if (!Number.isInteger(i) || i < 0 || i >= length) {
      throw new RangeError(`turn table index ${i} out of range 0..${length}`)
    }
    return HEADER_BYTES + i * RECORD_BYTES
  }
  return {
    length,
    turnAt: (i) => {
      record(i)
      return first + i
    },
    startAt: (i) => view.getFloat64(record(i), true),
    endAt: (i) => view.getFloat64(record(i) + 8, true),
    eventCountAt: (i) => view.getFloat64(record(i) + 16, true),
    tsAt: (i) => {
      const at = record(i)
      return utf8Decoder.decode(bytes.subarray(at + 25, at + 25 + view.getUint8(at + 24)))
    }
  }
}

/** Length and CRC-32 of a file's bytes, streamed through one reused buffer (none when missing). */
const fileCrc = (fs: SessionFsApi, path: string): Effect.Effect<{ bytes: number; crc: number }, StoreIoError> =>
  Effect.suspend(() => {
    let crc = 0
    return Effect.map(
      fs.forEachChunk(path, 1024 * 1024, (chunk) => {
        crc = crc32(chunk, crc)
      }),
      (bytes) => ({ bytes, crc })
    )
  })

/**
 * Loads the sidecar at `sidecarPath` when it is the derived copy of the `turns.json` at
 * `turnsPath` as it is now and describes a log of `fileLen` bytes; undefined when it is missing,
 * stale or corrupt, when the caller reads `turns.json` instead. An I/O error (a planted link
 * included, as for every metadata load) fails. Costs one read of the sidecar and one CRC pass
 * over `turns.json`, no JSON decoding.
 */
export const loadTurnIndexSidecar = (
  fs: SessionFsApi,
  sidecarPath: string,
  turnsPath: string,
  fileLen: number
): Effect.Effect<TurnTable | undefined, StoreIoError> =>
  Effect.gen(function*() {
    const read = yield* fs.readFileNoFollow(sidecarPath)
    if (Option.isNone(read)) return undefined
    const claimed = sidecarBinding(read.value)
    if (claimed === undefined || claimed.fileLen !== fileLen) return undefined
    const info = yield* fs.lstat(turnsPath)
    if (Option.isNone(info) || info.value.type !== "File" || info.value.size !== claimed.jsonBytes) return undefined
    const json = yield* fileCrc(fs, turnsPath)
    return decodeTurnIndexSidecar(read.value, { jsonBytes: json.bytes, jsonCrc: json.crc, fileLen })
  })
