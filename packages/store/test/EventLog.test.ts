import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as EventLog from "../src/EventLog.ts"
import { SessionFs } from "../src/SessionFs.ts"
import { SessionRegistry } from "../src/SessionRegistry.ts"

const layer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)
const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "logbook-eventlog-"))
const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 2 }
const turn = (text: string): ReadonlyArray<ThreadEvent> => [
  { type: "turn.started" },
  { type: "item.completed", item: { id: "m", type: "agent_message", text } },
  { type: "turn.completed", usage }
]

describe("EventLog", () => {
  it.effect("a reopened session keeps its turns and counters", () =>
    Effect.gen(function*() {
      const root = tempDir()
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* EventLog.open({ sessionsDir: root, sessionId: "s1" })
        for (const e of [...turn("one"), ...turn("two")]) yield* log.append(e)
      }))
      const manifest = yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* EventLog.open({ sessionsDir: root, sessionId: "s1" })
        const t = yield* log.reconstructTurn(2)
        assert.strictEqual(t.events.length, 3)
        return yield* log.manifest
      }))
      assert.strictEqual(manifest.turn_count, 2)
      assert.strictEqual(manifest.event_count, 6)
    }).pipe(Effect.provide(layer)))
})
