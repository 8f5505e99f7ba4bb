/**
 * The sessions catalog (docs/search.md#sessions-catalog): `recentSessions` with `saveCatalog`
 * keeps what each manifest says keyed by its size and mtime, reads only manifests whose signature
 * changed, and lists exactly what a listing without the catalog lists.
 */
import { assert, describe, it } from "@effect/vitest"
import { SessionFs, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { recentSessions, sessionsCatalogName } from "../../src/session/RecentSessions.ts"

// Each run gets its own registry and manifest LRU, as a new process would.
const fresh = () => Layer.provideMerge(Layer.fresh(SessionRegistry.layer), SessionFs.layerNode)

const writeSession = (root: string, name: string, updatedAt: string, turns: number, mtime: number) => {
  const dir = path.join(root, name)
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, "manifest.json")
  fs.writeFileSync(
    file,
    JSON.stringify({
      session_id: name,
      schema_version: 1,
      created_at: "2026-10-01T00:00:00Z",
      updated_at: updatedAt,
      status: "completed",
      turn_count: turns,
      event_count: turns * 3
    })
  )
  fs.utimesSync(file, mtime, mtime)
}

describe("sessions catalog", () => {
  it.effect("lists from the catalog what the manifests say, re-reading only changed manifests", () =>
    Effect.gen(function*() {
      const root = path.join(yield* tempDir("logbook-catalog-"), "sessions")
      for (let i = 0; i < 30; i++) {
        writeSession(
          root,
          `s${String(i).padStart(2, "0")}`,
          `2026-10-02T00:00:${String(i).padStart(2, "0")}Z`,
          i,
          1_000
        )
      }
      const plain = yield* recentSessions(root, { limit: 5 }).pipe(Effect.provide(fresh()))
      assert.isFalse(fs.existsSync(path.join(root, sessionsCatalogName)))
      const saved = yield* recentSessions(root, { limit: 5, saveCatalog: true }).pipe(Effect.provide(fresh()))
      assert.deepStrictEqual(saved, plain)
      assert.isTrue(fs.existsSync(path.join(root, sessionsCatalogName)))
      assert.strictEqual(fs.statSync(path.join(root, sessionsCatalogName)).mode & 0o777, 0o600)
      // A manifest the catalog holds is not read: a catalog entry is trusted while its signature holds.
      const catalog = JSON.parse(fs.readFileSync(path.join(root, sessionsCatalogName), "utf8"))
      assert.strictEqual(catalog.version, 2)
      // Rows are kept newest first: [name, sig, status, turns, events, created, updated, in_turn, s, ns].
      assert.deepStrictEqual(catalog.sessions.map((row: Array<unknown>) => row[0]).slice(0, 3), ["s29", "s28", "s27"])
      catalog.sessions[0][3] = 999
      fs.writeFileSync(path.join(root, sessionsCatalogName), JSON.stringify(catalog))
      const cached = yield* recentSessions(root, { limit: 1, saveCatalog: true }).pipe(Effect.provide(fresh()))
      assert.strictEqual(cached.sessions[0]?.turnCount, 999)
      // A changed manifest (new size and mtime) is re-read, and the catalog updated.
      writeSession(root, "s29", "2026-10-03T00:00:00Z", 7, 2_000)
      const changed = yield* recentSessions(root, { limit: 1, saveCatalog: true }).pipe(Effect.provide(fresh()))
      assert.strictEqual(changed.sessions[0]?.turnCount, 7)
      fs.rmSync(path.join(root, "s00"), { recursive: true })
      fs.mkdirSync(path.join(root, "broken"))
      const listed = yield* recentSessions(root, { saveCatalog: true }).pipe(Effect.provide(fresh()))
      fs.rmSync(path.join(root, sessionsCatalogName))
      const truth = yield* recentSessions(root).pipe(Effect.provide(fresh()))
      assert.deepStrictEqual(listed, truth)
      assert.deepStrictEqual(truth.unreadable, ["broken"])
      assert.strictEqual(truth.sessions.length, 29)
      // A corrupt catalog is ignored and rewritten.
      fs.writeFileSync(path.join(root, sessionsCatalogName), "{not json")
      assert.deepStrictEqual(yield* recentSessions(root, { saveCatalog: true }).pipe(Effect.provide(fresh())), truth)
      assert.doesNotThrow(() => JSON.parse(fs.readFileSync(path.join(root, sessionsCatalogName), "utf8")))
      // A damaged entry (a count that is not a number, a status outside the schema) is not trusted:
      // its manifest is read again, the other entries still serve.
      const good = JSON.parse(fs.readFileSync(path.join(root, sessionsCatalogName), "utf8"))
      const row = (name: string): Array<unknown> => good.sessions.find((r: Array<unknown>) => r[0] === name)
      row("s29")[3] = "many"
      row("s28")[2] = "sleeping"
      row("s27").length = 5
      fs.writeFileSync(path.join(root, sessionsCatalogName), JSON.stringify(good))
      assert.deepStrictEqual(yield* recentSessions(root, { saveCatalog: true }).pipe(Effect.provide(fresh())), truth)
      const repaired = JSON.parse(fs.readFileSync(path.join(root, sessionsCatalogName), "utf8"))
      const fixed = (name: string): Array<unknown> => repaired.sessions.find((r: Array<unknown>) => r[0] === name)
      assert.strictEqual(fixed("s29")[3], 7)
      assert.strictEqual(fixed("s28")[2], "completed")
      assert.strictEqual(fixed("s27").length, 10)
      // A catalog of another version is rebuilt, not misread.
      fs.writeFileSync(path.join(root, sessionsCatalogName), JSON.stringify({ ...repaired, version: 1 }))
      assert.deepStrictEqual(yield* recentSessions(root, { saveCatalog: true }).pipe(Effect.provide(fresh())), truth)
      assert.strictEqual(JSON.parse(fs.readFileSync(path.join(root, sessionsCatalogName), "utf8")).version, 2)
    }))

  it.effect("keeps a sanitised session id, ties and unparseable times in the order a listing without it gives", () =>
    Effect.gen(function*() {
      const root = path.join(yield* tempDir("logbook-catalog-"), "sessions")
      const times = [
        "2026-10-02T00:00:01Z",
        "2026-10-02T00:00:01.000000001+00:00",
        "not a time",
        "2026-10-02T00:00:01Z"
      ]
      for (let i = 0; i < 12; i++) writeSession(root, `t${i}`, times[i % times.length] ?? "", i, 1_000 + i)
      const odd = path.join(root, "t3", "manifest.json")
      fs.writeFileSync(odd, fs.readFileSync(odd, "utf8").replace("\"session_id\":\"t3\"", "\"session_id\":\"t3/raw\""))
      const truth = yield* recentSessions(root).pipe(Effect.provide(fresh()))
      assert.strictEqual(truth.sessions.find((x) => x.id === "t3")?.manifestSessionId, "t3/raw")
      const built = yield* recentSessions(root, { saveCatalog: true }).pipe(Effect.provide(fresh()))
      const catalogFile = path.join(root, sessionsCatalogName)
      const before = fs.statSync(catalogFile).mtimeMs
      fs.utimesSync(catalogFile, 5, 5)
      const again = yield* recentSessions(root, { saveCatalog: true }).pipe(Effect.provide(fresh()))
      assert.deepStrictEqual(built, truth)
      assert.deepStrictEqual(again, truth)
      // Nothing changed, so the catalog was not written again.
      assert.notStrictEqual(before, 5_000)
      assert.strictEqual(fs.statSync(catalogFile).mtimeMs, 5_000)
    }))
})
