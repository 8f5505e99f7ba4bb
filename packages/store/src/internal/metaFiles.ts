/**
 * Reading and writing the per-session metadata files (`manifest.json`, `index/turns.json`, the
 * cap-rewrite marker) through a given file system. Private to the write path: the writers can
 * publish metadata that no barrier vouched for, so only the barrier and the cap rewrite call
 * them. Loads never follow links; an absent or unparseable file is "none" (the caller rescans),
 * while an I/O error such as a planted symlink fails.
 */
import type { Manifest, PendingCapRewrite, TurnEntry } from "@logbook/domain"
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
import type { DirectoryHandle, SessionFsApi } from "../SessionFs.ts"
import type { StoreIoError } from "../StoreError.ts"
import { manifestCache } from "./manifestLru.ts"

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
    Effect.sync(() => manifestCache.evict(path))
  )

/** Above this many entries the turn index is written as a stream of chunks. */
const STREAMED_INDEX_ENTRIES = 4096

/**
 * Writes `index/turns.json` (`path`, a child of the held directory `dir`) atomically.
 *
 * **Gotchas**: the index is published before the manifest so a crash between the two leaves a
 * stale `persisted_file_len` in the manifest, which forces a rescan on the next open.
 */
export const writeTurnIndexWith = (
  dir: DirectoryHandle,
  path: string,
  entries: ReadonlyArray<TurnEntry>
): Effect.Effect<void, StoreIoError> =>
  entries.length <= STREAMED_INDEX_ENTRIES
    ? dir.writeAtomic(basename(path), encodeTurnIndex(entries))
    // A large index is streamed in chunks: no single string or buffer of all of it (bench P5).
    : dir.writeAtomicStream(
      basename(path),
      Stream.map(Stream.fromIterable(encodeTurnIndexChunks(entries)), (text) => Buffer.from(text, "utf8"))
    )

/** Writes the cap-rewrite marker atomically (before `events.jsonl` is replaced). */
export const writeMarkerWith = (
  fs: SessionFsApi,
  path: string,
  marker: PendingCapRewrite
): Effect.Effect<void, StoreIoError> => fs.writeAtomic(path, encodePendingCapRewrite(marker))

/** Removes the cap-rewrite marker; a missing marker is success. */
export const clearMarkerWith = (fs: SessionFsApi, path: string): Effect.Effect<void, StoreIoError> =>
  Effect.asVoid(fs.removeFile(path))
