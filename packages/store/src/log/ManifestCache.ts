/**
 * The cache of parsed manifests that listings use: an LRU of at most 200 entries keyed by the
 * manifest's path, each valid only while the file's (modification time, size) from `lstat` is
 * unchanged, so an external edit is always seen; the store's own manifest writes evict their
 * key. It is the `ManifestCache` service (provided by `storeLayerNode`), so its lifetime is the
 * host's layer; without it every load reads the file.
 */
import type { Manifest } from "@logbook/domain"
import { Effect, Option } from "effect"
import { fileSignature } from "../fs/Digest.ts"
import type { FileInfo } from "../fs/SessionFs.ts"
import { SessionFs } from "../fs/SessionFs.ts"
import type { StoreIoError } from "../fs/StoreError.ts"
import { ManifestCache } from "./internal/manifestLru.ts"
import { loadManifestWith } from "./internal/metaFiles.ts"

export { makeManifestLru, MANIFEST_CACHE_CAPACITY, ManifestCache } from "./internal/manifestLru.ts"
export type { ManifestLru } from "./internal/manifestLru.ts"

/**
 * Loads `manifest.json` through the host's cache: `info` is the file's current `lstat` (a regular
 * file); a cached manifest is returned only when its signature matches, otherwise the file is read
 * (no-follow) and cached. Absent or malformed → none (and nothing cached).
 */
export const loadManifestCached = (
  path: string,
  info: FileInfo
): Effect.Effect<Option.Option<Manifest>, StoreIoError, SessionFs> =>
  Effect.gen(function*() {
    const cache = yield* Effect.serviceOption(ManifestCache)
    const sig = fileSignature(info)
    const hit = Option.isSome(cache) ? cache.value.get(path, sig) : undefined
    if (hit !== undefined) return Option.some(hit)
    const fs = yield* SessionFs
    const loaded = yield* loadManifestWith(fs, path)
    if (Option.isSome(loaded) && Option.isSome(cache)) cache.value.set(path, sig, loaded.value)
    return loaded
  })
