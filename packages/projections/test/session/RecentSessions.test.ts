/**
 * Listing the sessions of a store: newest first by parsed `updated_at`, only real child
 * directories, unreadable manifests named, live and pinned sessions flagged, and nothing written.
 */
import { assert, describe, it } from "@effect/vitest"
import { EventLog, SessionFs, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import type { Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { recentSessions } from "../../src/session/RecentSessions.ts"

const layer = Layer.provideMerge(Layer.fresh(SessionRegistry.layer), SessionFs.layerNode)

const tempRoot: Effect.Effect<string, never, Scope.Scope> = Effect.map(
  tempDir("recent"),
  (base) => path.join(base, "sessions")
)

const writeSession = (root: string, name: string, updatedAt: string, extra: Record<string, unknown> = {}) => {
  const dir = path.join(root, name)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, "manifest.json"),
    JSON.stringify({
      session_id: name,
      schema_version: 1,
      created_at: updatedAt,
      updated_at: updatedAt,
      turn_count: 2,
      event_count: 7,
      status: "completed",
      ...extra
    })
  )
}

describe("RecentSessions", () => {
  it.effect("orders sessions by parsed update time, newest first, unparseable last, ties by name", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      writeSession(root, "b-utc", "2026-10-03T08:00:00Z")
      writeSession(root, "a-offset", "2026-10-03T10:30:00+02:00") // 08:30Z: newer than b-utc despite sorting lower as text
      writeSession(root, "c-same", "2026-10-03T08:00:00.000+00:00")
      writeSession(root, "d-bogus", "yesterday")
      writeSession(root, "e-new", "2026-10-04T00:00:00.123456789+00:00", { status: "active", in_turn: true })
      const listing = yield* recentSessions(root)
      assert.deepStrictEqual(listing.sessions.map((s) => s.id), ["e-new", "a-offset", "b-utc", "c-same", "d-bogus"])
      const newest = listing.sessions[0]
      assert.deepStrictEqual(
        newest === undefined ? undefined : [newest.status, newest.turnCount, newest.eventCount, newest.inTurn],
        ["active", 2, 7, true]
      )
      const limited = yield* recentSessions(root, { limit: 2 })
      assert.deepStrictEqual(limited.sessions.map((s) => s.id), ["e-new", "a-offset"])
    }).pipe(Effect.provide(layer)))

  it.effect("lists only real child directories and names those without a readable manifest", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      writeSession(root, "ok", "2026-10-03T08:00:00Z")
      writeSession(root, ".logbook-trash", "2026-10-03T08:00:00Z")
      fs.mkdirSync(path.join(root, "no-manifest"))
      fs.mkdirSync(path.join(root, "bad-manifest"))
      fs.writeFileSync(path.join(root, "bad-manifest", "manifest.json"), "{\"session_id\":1}")
      fs.writeFileSync(path.join(root, "a-file"), "x")
      fs.symlinkSync(path.join(root, "ok"), path.join(root, "link"))
      const before = fs.readdirSync(root).sort()
      const listing = yield* recentSessions(root)
      assert.deepStrictEqual(listing.sessions.map((s) => s.id), ["ok"])
      assert.deepStrictEqual(listing.unreadable, ["bad-manifest", "no-manifest"])
      assert.deepStrictEqual(fs.readdirSync(root).sort(), before)
      assert.isFalse(fs.existsSync(path.join(root, "ok", "session.lock")))
    }).pipe(Effect.provide(layer)))

  it.effect("flags sessions held open by a live process and pinned sessions", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      writeSession(root, "pinned", "2026-10-03T08:00:00Z")
      fs.writeFileSync(path.join(root, "pinned", "retention-pin.json"), "{\"reason\":\"keep\",\"pinned_at\":\"x\"}")
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* EventLog.open({ sessionsDir: root, sessionId: "open" })
        yield* log.append({ type: "turn.started" })
        yield* log.flush
        const listing = yield* recentSessions(root)
        const flags = Object.fromEntries(listing.sessions.map((s) => [s.id, [s.live, s.pinned]]))
        assert.deepStrictEqual(flags, { open: [true, false], pinned: [false, true] })
      }))
      const after = yield* recentSessions(root)
      assert.isFalse(after.sessions.find((s) => s.id === "open")?.live ?? true)
    }).pipe(Effect.provide(layer)))

  it.effect("a missing sessions root is an empty store", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot
      const listing = yield* recentSessions(root)
      assert.deepStrictEqual([listing.sessions, listing.unreadable], [[], []])
      assert.isFalse(fs.existsSync(root))
    }).pipe(Effect.provide(layer)))
})
