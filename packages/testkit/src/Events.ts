/**
 * Builders of ThreadEvents for tests: the small vocabulary every suite writes logs with (turns,
 * messages, boundaries, matrix checkpoints) and a decoder for wire-shaped events, so tests do not
 * depend on the TypeScript shape of every variant.
 */
import type { ThreadEvent } from "@logbook/domain"
import { decodeEvent } from "@logbook/domain"
import { Result } from "effect"

/** Token usage for `turn.completed` / `thread.completed` (any valid counters do). */
export const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 2 }

/** Decodes a wire-shaped event; throws (failing the test) when it is not a ThreadEvent. */
export const wireEvent = (wire: unknown): ThreadEvent => {
  const decoded = decodeEvent(wire)
  if (Result.isFailure(decoded)) throw new Error(`test event does not decode: ${decoded.failure.message}`)
  return decoded.success
}

/** The recorded time of stamped `turn.started` events when a test gives none. */
export const FIXED_TIMESTAMP = "2026-01-01T00:00:00.000+00:00"

/** One-event builders. */
export const ev = {
  threadStarted: (id = "th"): ThreadEvent => ({ type: "thread.started", thread_id: id }),
  /** A successful `thread.completed`; `fields` replace its usage or add a cost. */
  threadCompleted: (fields: { readonly usage?: typeof usage; readonly total_cost_usd?: number } = {}): ThreadEvent => ({
    type: "thread.completed",
    thread_id: "th",
    session_id: "s",
    subtype: "success",
    outcome_code: "ok",
    usage,
    num_turns: 1,
    ...fields
  }),
  /** `turn.started`; with a timestamp it carries an execution context recording it. */
  turnStarted: (timestamp?: string, turnId = "turn"): ThreadEvent =>
    timestamp === undefined ? { type: "turn.started" } : {
      type: "turn.started",
      context: { task_id: "task", turn_id: turnId, actor_id: "agent", origin: "user", timestamp }
    },
  /** A completed agent message. */
  msg: (text: string, id = "m"): ThreadEvent => ({ type: "item.completed", item: { id, type: "agent_message", text } }),
  completed: (): ThreadEvent => ({ type: "turn.completed", usage }),
  failed: (message = "boom"): ThreadEvent => ({ type: "turn.failed", message }),
  error: (message = "oops"): ThreadEvent => ({ type: "error", message }),
  /** A `matrix.updated` checkpoint of an empty running matrix `id` at `revision`. */
  matrixUpdated: (id: string, revision: number): ThreadEvent =>
    wireEvent({
      type: "matrix.updated",
      spec: { id, tasks: [], resources: {} },
      lifecycle: "running",
      tasks: [],
      generation: null,
      revision
    })
}

/** A whole turn: `turn.started`, one agent message per text, `turn.completed`. */
export const turn = (...texts: ReadonlyArray<string>): ReadonlyArray<ThreadEvent> => [
  ev.turnStarted(),
  ...texts.map((t) => ev.msg(t)),
  ev.completed()
]

/** JSONL of `n` bare turns (started, one agent message `<label> <i>`, completed), as a host pipes them. */
export const bareTurnsJsonl = (n: number, label = "t"): string =>
  Array.from({ length: n }, (_, i) =>
    [
      { type: "turn.started" },
      { type: "item.completed", item: { id: `${label}${i + 1}`, type: "agent_message", text: `${label} ${i + 1}` } },
      { type: "turn.completed", usage }
    ].map((e) => JSON.stringify(e)).join("\n")).join("\n") + "\n"
