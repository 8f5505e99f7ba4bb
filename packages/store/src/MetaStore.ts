/**
 * The manifest store (docs/format.md#manifest): loads and writes `manifest.json`, `index/turns.json` and
 * the pending cap-rewrite marker. Loads never follow links; an absent or unparseable file
 * is "none" (the caller rescans), while an I/O error such as a planted symlink fails.
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
import { SessionFs } from "./SessionFs.ts"
import type { StoreIoError } from "./StoreError.ts"

const utf8 = new TextDecoder("utf-8")

const loadText = <A>(path: string, decode: (text: string) => Result.Result<A, unknown>) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const bytes = yield* fs.readFileNoFollow(path)
    if (Option.isNone(bytes)) return Option.none<A>()
    const decoded = decode(utf8.decode(bytes.value))
    return Result.isSuccess(decoded) ? Option.some(decoded.success) : Option.none<A>()
  })

/** Loads `manifest.json`; absent or malformed → none. */
export const loadManifest = (path: string): Effect.Effect<Option.Option<Manifest>, StoreIoError, SessionFs> =>
  loadText(path, decodeManifestText)

/** Loads `index/turns.json` entries; absent or malformed → none. */
export const loadTurnIndex = (
  path: string
): Effect.Effect<Option.Option<ReadonlyArray<TurnEntry>>, StoreIoError, SessionFs> =>
  loadText(path, decodeTurnIndexText)

/** Loads the cap-rewrite marker; absent or malformed → none. */
export const loadMarker = (path: string): Effect.Effect<Option.Option<PendingCapRewrite>, StoreIoError, SessionFs> =>
  loadText(path, decodePendingCapRewriteText)

/**
 * Writes `manifest.json` atomically.
 *
 * **Gotchas**: call only after the events and the turn index it describes are durable.
 */
export const writeManifest = (path: string, manifest: Manifest): Effect.Effect<void, StoreIoError, SessionFs> =>
  SessionFs.use((fs) => fs.writeAtomic(path, encodeManifest(manifest)))

/**
 * Writes `index/turns.json` atomically.
 *
 * **Gotchas**: the index is published before the manifest so a crash between the two leaves a
 * stale `persisted_file_len` in the manifest, which forces a rescan on the next open.
 */
export const writeTurnIndex = (
  path: string,
  entries: ReadonlyArray<TurnEntry>
): Effect.Effect<void, StoreIoError, SessionFs> =>
  SessionFs.use((fs) =>
    entries.length <= STREAMED_INDEX_ENTRIES
      ? fs.writeAtomic(path, encodeTurnIndex(entries))
      // A large index is streamed in chunks: no single string or buffer of all of it (bench P5).
      : fs.writeAtomicStream(
        path,
        Stream.map(Stream.fromIterable(encodeTurnIndexChunks(entries)), (text) => Buffer.from(text, "utf8"))
      )
  )

/** Above this many entries the turn index is written as a stream of chunks. */
const STREAMED_INDEX_ENTRIES = 4096

/** Writes the cap-rewrite marker atomically (before `events.jsonl` is replaced). */
export const writeMarker = (path: string, marker: PendingCapRewrite): Effect.Effect<void, StoreIoError, SessionFs> =>
  SessionFs.use((fs) => fs.writeAtomic(path, encodePendingCapRewrite(marker)))

/** Removes the cap-rewrite marker; a missing marker is success. */
export const clearMarker = (path: string): Effect.Effect<void, StoreIoError, SessionFs> =>
  SessionFs.use((fs) => Effect.asVoid(fs.removeFile(path)))
