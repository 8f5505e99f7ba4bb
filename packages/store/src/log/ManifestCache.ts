/**
 * The process-wide cache of parsed manifests that listings use: an LRU of at most 200 entries
 * keyed by the manifest's path,
 * each valid only while the file's (modification time, size) from `lstat` is unchanged, so an
 * external edit is always seen; the store's own manifest writes evict their key.
 */
import type { Manifest } from "@logbook/domain"
import { Effect, Option } from "effect"
import type { FileInfo } from "../fs/SessionFs.ts"
import { SessionFs } from "../fs/SessionFs.ts"
import type { StoreIoError } from "../fs/StoreError.ts"
import { manifestCache } from "./internal/manifestLru.ts"
import { loadManifestWith } from "./internal/metaFiles.ts"

/** How many manifests the cache keeps. */
export const MANIFEST_CACHE_CAPACITY = 200

/**
 * Loads `manifest.json` through the cache: `info` is the file's current `lstat` (a regular file);
 * a cached manifest is returned only when its signature matches, otherwise the file is read
 * (no-follow) and cached. Absent or malformed → none (and nothing cached).
 */
export const loadManifestCached = (
  path: string,
  info: FileInfo
): Effect.Effect<Option.Option<Manifest>, StoreIoError, SessionFs> =>
  Effect.gen(function*() {
    const sig = `${info.mtimeMs}:${info.size}`
    const hit = manifestCache.get(path, sig)
    if (hit !== undefined) return Option.some(hit)
    const fs = yield* SessionFs
    const loaded = yield* loadManifestWith(fs, path)
    if (Option.isSome(loaded)) manifestCache.set(path, sig, loaded.value)
    return loaded
  })

/** Drops every cached manifest (tests; a host that swaps stores under the same paths). */
export const clearManifestCache = Effect.sync(() => manifestCache.clear())

/** How many manifests are cached now. */
export const manifestCacheSize = Effect.sync(() => manifestCache.size())
