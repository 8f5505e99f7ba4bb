/**
 * The manifest LRU of a host (the `ManifestCache` service): a cached manifest is served only while the file's (mtime, size)
 * is unchanged, so external edits are seen; the store's own manifest writes evict their key; at
 * most 200 manifests are kept.
 */
import { assert, describe, it } from "@effect/vitest"
import { plantSession, tempWorkspace } from "@logbook/testkit"
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import * as EventLog from "../../src/log/EventLog.ts"
import { loadManifestCached, MANIFEST_CACHE_CAPACITY, ManifestCache } from "../../src/log/ManifestCache.ts"
import { SessionRegistry } from "../../src/log/SessionRegistry.ts"

const layer = Layer.mergeAll(Layer.fresh(SessionRegistry.layer), Layer.fresh(ManifestCache.layer)).pipe(
  Layer.provideMerge(SessionFs.layerNode)
)

const manifestCacheSize = ManifestCache.use((cache) => Effect.succeed(cache.size()))

const load = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const info = yield* fs.lstat(file)
    if (Option.isNone(info)) return Option.none()
    return yield* loadManifestCached(file, info.value)
  })

describe("ManifestCache", () => {
  it.effect("serves a cached manifest until the file's mtime or size changes", () =>
    Effect.gen(function*() {
      const ws = yield* tempWorkspace("manifest-lru")
      const dir = plantSession(ws.sessions, "s", { manifest: { turn_count: 1 } })
      const file = path.join(dir, "manifest.json")
      fs.utimesSync(file, 1_000, 1_000)
      const first = yield* load(file)
      assert.strictEqual(Option.getOrUndefined(first)?.turn_count, 1)
      // Same size and mtime: the cached manifest (an in-place edit keeping both is not seen).
      fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("\"turn_count\":1", "\"turn_count\":7"))
      fs.utimesSync(file, 1_000, 1_000)
      assert.strictEqual(Option.getOrUndefined(yield* load(file))?.turn_count, 1)
      // An external edit that changes the mtime is seen.
      fs.utimesSync(file, 2_000, 2_000)
      assert.strictEqual(Option.getOrUndefined(yield* load(file))?.turn_count, 7)
    }).pipe(Effect.provide(layer)))

  it.effect("is evicted by the store's own manifest writes and keeps at most 200 entries", () =>
    Effect.gen(function*() {
      const ws = yield* tempWorkspace("manifest-lru")
      const log = yield* EventLog.open({ sessionsDir: ws.sessions, sessionId: "live" })
      yield* log.append({ type: "turn.started" })
      yield* log.flush
      const file = path.join(ws.sessions, "live", "manifest.json")
      yield* load(file)
      assert.strictEqual(yield* manifestCacheSize, 1)
      yield* log.append({
        type: "turn.completed",
        usage: { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }
      })
      assert.strictEqual(yield* manifestCacheSize, 0)
      assert.strictEqual(Option.getOrUndefined(yield* load(file))?.turn_count, 1)
      for (let i = 0; i < MANIFEST_CACHE_CAPACITY + 5; i++) {
        yield* load(path.join(plantSession(ws.sessions, `p${i}`), "manifest.json"))
      }
      assert.strictEqual(yield* manifestCacheSize, MANIFEST_CACHE_CAPACITY)
    }).pipe(Effect.provide(layer)))

  it.effect("is not shared between hosts", () =>
    Effect.gen(function*() {
      const ws = yield* tempWorkspace("manifest-lru")
      const file = path.join(plantSession(ws.sessions, "s", { manifest: { turn_count: 1 } }), "manifest.json")
      yield* load(file)
      assert.strictEqual(yield* manifestCacheSize, 1)
      const other = yield* Effect.provide(manifestCacheSize, Layer.fresh(ManifestCache.layer))
      assert.strictEqual(other, 0)
    }).pipe(Effect.provide(layer)))

  it.effect("without a cache every load reads the file", () =>
    Effect.gen(function*() {
      const ws = yield* tempWorkspace("manifest-lru")
      const file = path.join(plantSession(ws.sessions, "s", { manifest: { turn_count: 1 } }), "manifest.json")
      fs.utimesSync(file, 1_000, 1_000)
      assert.strictEqual(Option.getOrUndefined(yield* load(file))?.turn_count, 1)
      fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("\"turn_count\":1", "\"turn_count\":7"))
      fs.utimesSync(file, 1_000, 1_000)
      assert.strictEqual(Option.getOrUndefined(yield* load(file))?.turn_count, 7)
    }).pipe(Effect.provide(SessionFs.layerNode)))
})
