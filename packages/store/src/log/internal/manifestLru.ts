/**
 * The process-wide manifest LRU behind `ManifestCache`, kept here so the metadata writers can
 * evict a key without depending on the public module.
 */
import type { Manifest } from "@logbook/domain"

const CAPACITY = 200

const entries = new Map<string, { readonly sig: string; readonly manifest: Manifest }>()

/** The LRU: a `Map` in recency order (oldest first). */
export const manifestCache = {
  get: (path: string, sig: string): Manifest | undefined => {
    const entry = entries.get(path)
    if (entry === undefined) return undefined
    entries.delete(path)
    if (entry.sig !== sig) return undefined
    entries.set(path, entry)
    return entry.manifest
  },
  set: (path: string, sig: string, manifest: Manifest): void => {
    entries.delete(path)
    entries.set(path, { sig, manifest })
    while (entries.size > CAPACITY) {
      const oldest = entries.keys().next()
      if (oldest.done === true) break
      entries.delete(oldest.value)
    }
  },
  evict: (path: string): void => {
    entries.delete(path)
  },
  clear: (): void => entries.clear(),
  size: (): number => entries.size
}
