/**
 * The manifest LRU behind `ManifestCache`, and the service that holds one, kept here so the
 * metadata writers can evict a key without depending on the public module (which depends on
 * them). Nothing is process-global: a cache lives as long as the layer that made it.
 */
import type { Manifest } from "@logbook/domain"
import { Context, Effect, Layer, Option } from "effect"

/** How many manifests a cache keeps by default. */
export const MANIFEST_CACHE_CAPACITY = 200

/** A least-recently-used map from a manifest's path to its parse, valid for one file signature. */
export interface ManifestLru {
  /** The cached manifest of `path` when its signature is still `sig`. */
  readonly get: (path: string, sig: string) => Manifest | undefined
  /** Caches a manifest read with signature `sig`, evicting the oldest beyond the capacity. */
  readonly set: (path: string, sig: string, manifest: Manifest) => void
  /** Forgets `path`. */
  readonly evict: (path: string) => void
  /** How many manifests are cached. */
  readonly size: () => number
}

/** A new, empty LRU: a `Map` in recency order (oldest first). */
export const makeManifestLru = (capacity: number = MANIFEST_CACHE_CAPACITY): ManifestLru => {
  const entries = new Map<string, { readonly sig: string; readonly manifest: Manifest }>()
  return {
    get: (path, sig) => {
      const entry = entries.get(path)
      if (entry === undefined) return undefined
      entries.delete(path)
      if (entry.sig !== sig) return undefined
      entries.set(path, entry)
      return entry.manifest
    },
    set: (path, sig, manifest) => {
      entries.delete(path)
      entries.set(path, { sig, manifest })
      while (entries.size > capacity) {
        const oldest = entries.keys().next()
        if (oldest.done === true) break
        entries.delete(oldest.value)
      }
    },
    evict: (path) => {
      entries.delete(path)
    },
    size: () => entries.size
  }
}

/**
 * The manifest cache of a host: listings read manifests through it when it is provided
 * (`storeLayerNode` does), and read them afresh when it is not.
 */
export class ManifestCache extends Context.Service<ManifestCache, ManifestLru>()("@logbook/store/ManifestCache") {
  /** An empty cache of {@link MANIFEST_CACHE_CAPACITY} entries whose lifetime is the layer's. */
  static readonly layer: Layer.Layer<ManifestCache> = Layer.sync(ManifestCache, () => makeManifestLru())
}

/**
 * Forgets `path` in the host's cache, if it has one.
 *
 * **Gotchas**: every write of a manifest ends with this, whatever its outcome (a failed write may
 * still have replaced the file), so a listing never serves a manifest the store replaced.
 */
export const evictCachedManifest = (path: string): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.serviceOption(ManifestCache),
    (cache) => Option.isSome(cache) ? Effect.sync(() => cache.value.evict(path)) : Effect.void
  )
