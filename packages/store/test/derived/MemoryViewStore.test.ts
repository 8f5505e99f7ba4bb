/**
 * The memory view on disk (docs/search.md#memory-view): atomic private write, no write on a
 * content-equivalent view (bytes and mtime unchanged), `created_at` preserved, symlinked session
 * entries refused, and a derived view that never replaces a host-written one.
 */
import { assert, describe, it } from "@effect/vitest"
import type { SessionMemoryView } from "@logbook/domain"
import { tempWorkspace } from "@logbook/testkit"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { memoryViewPath, writeDerivedMemoryView, writeMemoryView } from "../../src/derived/MemoryViewStore.ts"
import { SessionFs } from "../../src/fs/SessionFs.ts"
import { sessionPaths } from "../../src/log/SessionPaths.ts"

const view = (facts: ReadonlyArray<string>, extra: Partial<SessionMemoryView> = {}): SessionMemoryView => ({
  summary: "s",
  task_summary: null,
  spec_summary: null,
  evaluation_summary: null,
  touched_files: [],
  grounded_facts: facts.map((fact) => ({ fact, source: "host" })),
  history_artifact_path: null,
  generated_at: "2026-01-01T00:00:00Z",
  ...extra
})

const derived = (facts: ReadonlyArray<string>): SessionMemoryView => view(facts, { origin: "derived", created_at: 5 })

describe("MemoryViewStore", () => {
  it.effect("writes privately, then leaves bytes and mtime alone on an equivalent write", () =>
    Effect.gen(function*() {
      const ws = yield* tempWorkspace("memview")
      yield* TestClock.adjust("1000 seconds")
      const first = yield* writeMemoryView(ws.sessions, "a/b", view(["x"]))
      assert.isTrue(first.written)
      const file = first.path
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
      assert.strictEqual(fs.statSync(path.dirname(file)).mode & 0o777, 0o700)
      const before = fs.readFileSync(file, "utf8")
      const stored: { session_id: string; created_at: number; updated_at: number } = JSON.parse(before)
      assert.strictEqual(stored.session_id, "a/b")
      assert.strictEqual(stored.created_at, 1000)
      const mtime = fs.statSync(file).mtimeMs
      yield* TestClock.adjust("50 seconds")
      const again = yield* writeMemoryView(ws.sessions, "a/b", view(["x"], { generated_at: "2027-01-01T00:00:00Z" }))
      assert.isFalse(again.written)
      assert.strictEqual(fs.readFileSync(file, "utf8"), before)
      assert.strictEqual(fs.statSync(file).mtimeMs, mtime)
      const changed = yield* writeMemoryView(ws.sessions, "a/b", view(["x", "y"]))
      assert.isTrue(changed.written)
      const after: { created_at: number; updated_at: number } = JSON.parse(fs.readFileSync(file, "utf8"))
      assert.strictEqual(after.created_at, 1000)
      assert.strictEqual(after.updated_at, 1050)
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("refuses a session entry that is a symlink", () =>
    Effect.gen(function*() {
      const ws = yield* tempWorkspace("memview-link", { dirs: ["elsewhere"] })
      fs.mkdirSync(ws.sessions, { recursive: true })
      fs.symlinkSync(path.join(ws.root, "elsewhere"), path.join(ws.sessions, "s"))
      const error = yield* Effect.flip(writeMemoryView(ws.sessions, "s", view(["x"])))
      assert.strictEqual(error._tag, "StoreIoError")
      assert.deepStrictEqual(fs.readdirSync(path.join(ws.root, "elsewhere")), [])
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("never replaces a host-written view with a derived one, but refreshes its own", () =>
    Effect.gen(function*() {
      const ws = yield* tempWorkspace("memview-derived")
      const paths = sessionPaths(ws.sessions, "s")
      const own = yield* writeDerivedMemoryView(paths, "s", derived(["d1"]))
      assert.isTrue(own.written)
      const refreshed = yield* writeDerivedMemoryView(paths, "s", derived(["d1", "d2"]))
      assert.isTrue(refreshed.written)
      yield* writeMemoryView(ws.sessions, "s", view(["host"]))
      const host = fs.readFileSync(memoryViewPath(paths), "utf8")
      const kept = yield* writeDerivedMemoryView(paths, "s", derived(["d3"]))
      assert.isTrue(kept.keptHostView)
      assert.isFalse(kept.written)
      assert.strictEqual(fs.readFileSync(memoryViewPath(paths), "utf8"), host)
      // A legacy host view (facts only) is kept too.
      fs.writeFileSync(memoryViewPath(paths), JSON.stringify({ summary: "x", grounded_facts: [{ fact: "legacy" }] }))
      assert.isTrue((yield* writeDerivedMemoryView(paths, "s", derived(["d4"]))).keptHostView)
      // A corrupt file is reported, not replaced.
      fs.writeFileSync(memoryViewPath(paths), "{oops")
      const error = yield* Effect.flip(writeDerivedMemoryView(paths, "s", derived(["d5"])))
      assert.strictEqual(error._tag, "CorruptFile")
      assert.strictEqual(fs.readFileSync(memoryViewPath(paths), "utf8"), "{oops")
    }).pipe(Effect.provide(SessionFs.layerNode)))
})
