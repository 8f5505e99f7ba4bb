/**
 * The embedding example of the README, verbatim, so it stays type-checked. Run it with
 * `npx node --conditions=@logbook/source examples/readme-embedding.ts` (it records into
 * `./.logbook/sessions/my-session`).
 */
import { SessionMemory } from "@logbook/runtime"
import { Effect } from "effect"

const usage = { input_tokens: 5300, cached_input_tokens: 4100, cache_creation_tokens: 0, output_tokens: 212 }

const agentTurn = Effect.gen(function*() {
  const memory = yield* SessionMemory
  yield* memory.append({ type: "turn.started" })
  yield* memory.append({ type: "item.completed", item: { id: "msg-1", type: "agent_message", text: "Done." } })
  yield* memory.append({ type: "turn.completed", usage }) // a turn boundary: durable when this returns
  return yield* memory.reconstructTurn(1) // { turn, events, skipped }
})

agentTurn.pipe(
  Effect.provide(SessionMemory.layerNode({ workspace: process.cwd(), sessionId: "my-session" })),
  Effect.runPromise
)
