import { assert, describe, it } from "@effect/vitest"
import { plantSession, tempDir } from "@logbook/testkit"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { runSimulatedAgent } from "../../../examples/simulated-agent.ts"
import { SessionMemory, storeLayerNode } from "../src/SessionMemory.ts"

/** A temporary workspace, removed when the test's scope closes. */
const tempWorkspace = () => tempDir("runtime")
const sessionsOf = (workspace: string) => path.join(workspace, ".logbook", "sessions")
const readManifest = (workspace: string, id: string) =>
  JSON.parse(fs.readFileSync(path.join(sessionsOf(workspace), id, "manifest.json"), "utf8"))

/** A completed zero-turn session on disk: retention's phase 0 removes it. */
const plantEmptyCompletedSession = (workspace: string, id: string) =>
  plantSession(sessionsOf(workspace), id, { manifest: { turn_count: 0, event_count: 0 } })

/** A temporary workspace holding the completed zero-turn session `old-empty`. */
const workspaceWithOldEmpty = Effect.tap(
  tempWorkspace(),
  (workspace) => Effect.sync(() => plantEmptyCompletedSession(workspace, "old-empty"))
)

const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }

describe("SessionMemory", () => {
  it.effect("releasing the layer flushes the session and then applies retention around it", () =>
    Effect.gen(function*() {
      const workspace = yield* workspaceWithOldEmpty
      yield* Effect.gen(function*() {
        const memory = yield* SessionMemory
        yield* memory.append({ type: "turn.started" })
        yield* memory.append({ type: "item.completed", item: { id: "m", type: "agent_message", text: "hi" } })
      }).pipe(Effect.provide(SessionMemory.layer({ workspace, sessionId: "current" })))
      const manifest = readManifest(workspace, "current")
      const size = fs.statSync(path.join(sessionsOf(workspace), "current", "events.jsonl")).size
      assert.strictEqual(manifest.event_count, 2)
      assert.strictEqual(manifest.in_turn, true)
      assert.strictEqual(manifest.persisted_file_len, size)
      assert.isFalse(fs.existsSync(path.join(sessionsOf(workspace), "old-empty")))
      assert.isTrue(fs.existsSync(path.join(sessionsOf(workspace), "current")))
    }).pipe(Effect.provide(storeLayerNode)))

  it.effect("retention false leaves other sessions alone on release", () =>
    Effect.gen(function*() {
      const workspace = yield* workspaceWithOldEmpty
      yield* Effect.gen(function*() {
        const memory = yield* SessionMemory
        yield* memory.append({ type: "turn.started" })
      }).pipe(Effect.provide(SessionMemory.layer({ workspace, sessionId: "current", retention: false })))
      assert.isTrue(fs.existsSync(path.join(sessionsOf(workspace), "old-empty")))
    }).pipe(Effect.provide(storeLayerNode)))

  it.effect("a failure inside the host's scope still flushes what was appended", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      const exit = yield* Effect.exit(
        Effect.gen(function*() {
          const memory = yield* SessionMemory
          yield* memory.append({ type: "turn.started" })
          yield* memory.append({ type: "item.completed", item: { id: "m", type: "agent_message", text: "partial" } })
          return yield* Effect.fail("the agent crashed")
        }).pipe(Effect.provide(SessionMemory.layer({ workspace, sessionId: "crashy", retention: false })))
      )
      assert.isTrue(Exit.isFailure(exit))
      const text = fs.readFileSync(path.join(sessionsOf(workspace), "crashy", "events.jsonl"), "utf8")
      assert.include(text, "\"partial\"")
      assert.strictEqual(readManifest(workspace, "crashy").event_count, 2)
    }).pipe(Effect.provide(storeLayerNode)))

  it.effect("a regular file planted at derived/ and index/ never stops the session from recording", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      const dir = path.join(sessionsOf(workspace), "planted")
      const layer = SessionMemory.layer({ workspace, sessionId: "planted", retention: false })
      const appendTurn = Effect.gen(function*() {
        const memory = yield* SessionMemory
        yield* memory.append({ type: "turn.started" })
        yield* memory.append({ type: "turn.completed", usage })
      })
      yield* appendTurn.pipe(Effect.provide(layer))
      for (const name of ["derived", "index"]) {
        fs.rmSync(path.join(dir, name), { recursive: true })
        fs.writeFileSync(path.join(dir, name), "planted")
      }
      yield* appendTurn.pipe(Effect.provide(layer))
      assert.strictEqual(readManifest(workspace, "planted").turn_count, 2)
      assert.isTrue(fs.statSync(path.join(dir, "derived")).isDirectory())
      assert.isTrue(fs.statSync(path.join(dir, "index")).isDirectory())
    }).pipe(Effect.provide(storeLayerNode)))

  it.effect("two layers on one session in one process share turn numbering", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      const layer = SessionMemory.layer({ workspace, sessionId: "shared", retention: false })
      const appendTurn = Effect.gen(function*() {
        const memory = yield* SessionMemory
        yield* memory.append({ type: "turn.started" })
        yield* memory.append({ type: "turn.completed", usage })
        return (yield* memory.manifest).turn_count
      })
      const counts = yield* Effect.all([
        appendTurn.pipe(Effect.provide(layer)),
        appendTurn.pipe(Effect.provide(layer))
      ], { concurrency: 2 })
      assert.deepStrictEqual([...counts].sort(), [1, 2])
    }).pipe(Effect.provide(storeLayerNode)))

  it.effect("the simulated agent example records its turns through the layer", () =>
    Effect.gen(function*() {
      const workspace = yield* tempWorkspace()
      const manifest = yield* runSimulatedAgent(workspace, "example", 3)
      assert.strictEqual(manifest.turn_count, 3)
      assert.strictEqual(manifest.event_count, 1 + 3 * 6)
      assert.strictEqual(readManifest(workspace, "example").turn_count, 3)
    }))
})
