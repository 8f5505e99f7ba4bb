/**
 * Reading and writing the per-session metadata files (`manifest.json`, `index/turns.json`, the
 * cap-rewrite marker) through a given file system. Private to the write path: the writers can
 * publish metadata that no barrier vouched for, so only the barrier and the cap rewrite call
 * them. Loads never follow links; an absent or unparseable file is "none" (the caller rescans),
 * while an I/O error such as a planted symlink fails.
 */
import type { Manifest, PendingCapRewrite, TurnTable } from "@logbook/domain"
import {
  decodeManifestText,
  decodePendingCapRewriteText,
  decodeTurnIndexText,
  encodeManifest,
  encodePendingCapRewrite,
  encodeTurnIndex,
  encodeTurnIndexChunks
} from "@logbook/domain"
import { Effect, Option, Result, Stream } from "effect"
import { Buffer } from "node:buffer"
import { basename } from "node:path"
import { crc32 } from "node:zlib"
import type { DirectoryHandle, SessionFsApi } from "../../fs/SessionFs.ts"
import type { StoreIoError } from "../../fs/StoreError.ts"
import { encodeTurnIndexSidecarChunks, SIDECAR_MIN_ENTRIES } from "../TurnIndexSidecar.ts"
import { evictCachedManifest } from "./manifestLru.ts"

const utf8 = new TextDecoder("utf-8")

const loadText = <A>(
  fs: SessionFsApi,
  path: string,
  decode: (text: string) => Result.Result<A, unknown>
): Effect.Effect<Option.Option<A>, StoreIoError> =>
  Effect.map(fs.readFileNoFollow(path), (bytes) => {
    if (Option.isNone(bytes)) return Option.none<A>()
    const decoded = decode(utf8.decode(bytes.value))
    return Result.isSuccess(decoded) ? Option.some(decoded.success) : Option.none<A>()
  })

/** Loads `manifest.json`; absent or malformed → none. */
export const loadManifestWith = (fs: SessionFsApi, path: string) => loadText(fs, path, decodeManifestText)

/** Loads `index/turns.json` entries; absent or malformed → none. */
export const loadTurnIndexWith = (fs: SessionFsApi, path: string) => loadText(fs, path, decodeTurnIndexText)

/** Loads the cap-rewrite marker; absent or malformed → none. */
export const loadMarkerWith = (fs: SessionFsApi, path: string) => loadText(fs, path, decodePendingCapRewriteText)

/**
 * Writes `manifest.json` (`path`, a child of the held directory `dir`) atomically.
 *
 * **Gotchas**: call only after the events and the turn index it describes are durable.
 */
export const writeManifestWith = (
  dir: DirectoryHandle,
  path: string,
  manifest: Manifest
): Effect.Effect<void, StoreIoError> =>
  // The cache entry goes whatever the outcome: a failed write may still have replaced the file.
  Effect.ensuring(
    dir.writeAtomic(basename(path), encodeManifest(manifest)),
    evictCachedManifest(path)
  )

/** Above this many entries the turn index is written as a stream of chunks, and gets a sidecar. */
const STREAMED_INDEX_ENTRIES = SIDECAR_MIN_ENTRIES

/**
 * Writes `index/turns.json` atomically through the held `index/` directory `dir`; above
 * {@link SIDECAR_MIN_ENTRIES} entries, then its derived binary copy `index/turns.bin` (bound to
 * the JSON bytes just written).
 *
 * **Gotchas**: the index is published before the manifest so a crash between the two leaves a
 * stale `persisted_file_len` in the manifest, which forces a rescan on the next open. A crash
 * between `turns.json` and `turns.bin` leaves a sidecar bound to the previous JSON bytes, which
 * readers ignore. `fileLen` is the log length the index describes (the coming manifest's).
 */
export const writeTurnIndexWith = (
  dir: DirectoryHandle,
  paths: { readonly turns: string; readonly turnsSidecar: string },
  entries: TurnTable,
  fileLen: number
): Effect.Effect<void, StoreIoError> => {
  if (entries.length <= STREAMED_INDEX_ENTRIES) return dir.writeAtomic(basename(paths.turns), encodeTurnIndex(entries))
  return Effect.suspend(() => {
    let jsonBytes = 0
    let jsonCrc = 0
    // A large index is streamed in chunks: no single string or buffer of all of it (bench P5).
    // One text chunk per stream chunk: by default the stream would pull 4096 of them (the whole
    // index of any session below 16 M turns) into one array before writing the first.
    const chunks = Stream.map(Stream.fromIterable(encodeTurnIndexChunks(entries), { chunkSize: 1 }), (text) => {
      const bytes = Buffer.from(text, "utf8")
      jsonBytes += bytes.length
      jsonCrc = crc32(bytes, jsonCrc)
      return bytes
    })
    return Effect.andThen(dir.writeAtomicStream(basename(paths.turns), chunks), () => {
      const sidecar = encodeTurnIndexSidecarChunks(entries, { jsonBytes, jsonCrc, fileLen })
      // Not representable: an older sidecar stays, bound to the previous JSON bytes, so readers
      // find it stale and ignore it.
      return sidecar === undefined
        ? Effect.void
        : dir.writeAtomicStream(basename(paths.turnsSidecar), Stream.fromIterable(sidecar, { chunkSize: 1 }))
    })
  })
}

/** Writes the cap-rewrite marker atomically (before `events.jsonl` is replaced). */
export const writeMarkerWith = (
  fs: SessionFsApi,
  path: string,
  marker: PendingCapRewrite
): Effect.Effect<void, StoreIoError> => fs.writeAtomic(path, encodePendingCapRewrite(marker))

/** Removes the cap-rewrite marker; a missing marker is success. */
export const clearMarkerWith = (fs: SessionFsApi, path: string): Effect.Effect<void, StoreIoError> =>
  Effect.asVoid(fs.removeFile(path))
