/**
 * A small simulated agent loop embedding Logbook the way a host would: the session is a
 * scoped `SessionMemory` layer; each turn appends typed ThreadEvents; leaving the scope
 * flushes, completes, releases the lock and applies retention. Run it with
 * `node --conditions=@logbook/source examples/run-simulated-agent.ts [workspace]`.
 */
import type { ThreadEvent } from "@logbook/domain"
import { formatRfc3339 } from "@logbook/domain"
import { SessionMemory } from "@logbook/runtime"
import { Clock, Effect } from "effect"

const usage = (input: number, output: number) => ({
  input_tokens: input,
  cached_input_tokens: Math.floor(input / 2),
  cache_creation_tokens: 0,
  output_tokens: output
})

/** The events of one simulated turn: a goal, a command that fails then passes, a fix, a reply. */
const turnEvents = (n: number, timestamp: string): ReadonlyArray<ThreadEvent> => [
  {
    type: "turn.started",
    context: {
      task_id: "task-cache",
      turn_id: `turn-${n}`,
      actor_id: "root",
      origin: n === 1 ? "user" : "continuation",
      timestamp,
      goal: "Make the cache test pass"
    }
  },
  {
    type: "item.completed",
    item: { id: `r-${n}`, type: "reasoning", text: "The TTL is zero; raise it.", stage: "diagnosis" }
  },
  {
    type: "item.completed",
    item: {
      id: `cmd-${n}`,
      type: "command_execution",
      command: "npm test",
      aggregated_output: n === 1 ? "1 failing" : "all passing",
      exit_code: n === 1 ? 1 : 0,
      status: n === 1 ? "failed" : "completed"
    }
  },
  {
    type: "item.completed",
    item: {
      id: `fc-${n}`,
      type: "file_change",
      changes: [{ path: "src/cache.ts", kind: "update" }],
      status: "completed",
      unified_diff: "--- a/src/cache.ts\n+++ b/src/cache.ts\n@@ -1 +1 @@\n-ttl = 0\n+ttl = 60\n",
      additions: 1,
      deletions: 1
    }
  },
  { type: "item.completed", item: { id: `msg-${n}`, type: "agent_message", text: `Turn ${n} done.` } },
  { type: "turn.completed", usage: usage(5000 + n, 200 + n) }
]

/** Records `turns` simulated turns into `sessionId` below `workspace`; returns the final manifest. */
export const runSimulatedAgent = (workspace: string, sessionId: string, turns: number) =>
  Effect.gen(function*() {
    const memory = yield* SessionMemory
    yield* memory.append({ type: "thread.started", thread_id: `thread-${sessionId}` })
    for (let n = 1; n <= turns; n++) {
      const timestamp = formatRfc3339(yield* Clock.currentTimeMillis, "Z")
      for (const event of turnEvents(n, timestamp)) yield* memory.append(event)
    }
    const replay = yield* memory.reconstructTurn(1)
    yield* Effect.logInfo(`turn 1 has ${replay.events.length} events`)
    return yield* memory.manifest
  }).pipe(Effect.provide(SessionMemory.layerNode({ workspace, sessionId, retention: false })))
