/**
 * Deterministic, realistic ThreadEvent data for the benchmarks: turns of about 20 events
 * (`turn.started` with an execution context, reasoning, commands with a few hundred bytes of
 * output, tool calls and outputs, a file change, permission prompts, an agent message,
 * `turn.completed` with usage), generated from a seed.
 *
 * Objects are built with their keys in the contract's declaration order, so the raw
 * baselines' `JSON.stringify` of an envelope produces exactly the canonical bytes Logbook
 * writes (`sameBytes` checks it): both sides of every ratio write the same data.
 */
import type { ItemContext, ThreadEvent, ThreadItem } from "@logbook/domain"
import { encodeLine, EVENT_SCHEMA_VERSION } from "@logbook/domain"
import type { Rng } from "./rng.ts"
import { makeRng } from "./rng.ts"

const WORDS = [
  "the",
  "test",
  "module",
  "returns",
  "value",
  "error",
  "config",
  "build",
  "function",
  "handler",
  "request",
  "session",
  "index",
  "offset",
  "stream",
  "buffer",
  "parser",
  "token",
  "should",
  "because",
  "check",
  "update",
  "file",
  "path",
  "line",
  "\"quoted\"",
  "fix",
  "using",
  "Effect",
  "layer",
  "schema",
  "décodé"
]

const PATHS = [
  "src/index.ts",
  "src/server/handler.ts",
  "src/lib/parse.ts",
  "test/parse.test.ts",
  "packages/core/src/Session.ts",
  "README.md",
  "package.json"
]

const COMMANDS = ["npm test", "npx tsc --noEmit", "git status", "rg -n \"TODO\" src", "ls -la src", "cat package.json"]

const TOOLS = ["read_file", "write_file", "grep_file", "list_files", "apply_patch"]

const BASE_MS = Date.UTC(2025, 0, 1)

const sentence = (rng: Rng, minBytes: number, maxBytes: number): string => {
  const target = rng.int(minBytes, maxBytes)
  let out = ""
  while (out.length < target) out += (out.length === 0 ? "" : " ") + rng.pick(WORDS)
  return out
}

// Command output: several lines, so the encoder has newlines to escape as real output does.
const output = (rng: Rng, minBytes: number, maxBytes: number): string => {
  const target = rng.int(minBytes, maxBytes)
  let out = ""
  while (out.length < target) out += `${rng.pick(PATHS)}:${rng.int(1, 400)}: ${sentence(rng, 30, 90)}\n`
  return out
}

const diff = (rng: Rng, path: string): string => {
  let out = `--- a/${path}\n+++ b/${path}\n@@ -${rng.int(1, 200)},6 +${rng.int(1, 200)},7 @@\n`
  for (let i = 0; i < 6; i++) out += `${rng.pick([" ", "-", "+"])}  ${sentence(rng, 20, 60)}\n`
  return out
}

/** The events of one complete turn: `turn.started`, `middle` in-turn events, `turn.completed`. */
export const makeTurn = (rng: Rng, turn: number, middle = 18): Array<ThreadEvent> => {
  const turnMs = BASE_MS + turn * 60_000
  const at = (k: number) => new Date(turnMs + k * 700).toISOString()
  const taskId = `task-${Math.ceil(turn / 8)}`
  const turnId = `turn-${turn}`
  const ctx = (k: number, activity?: ItemContext["activity"]): ItemContext =>
    activity === undefined
      ? { task_id: taskId, turn_id: turnId, actor_id: "main", timestamp: at(k) }
      : { task_id: taskId, turn_id: turnId, actor_id: "main", timestamp: at(k), activity }
  const events: Array<ThreadEvent> = [{
    type: "turn.started",
    context: { task_id: taskId, turn_id: turnId, actor_id: "main", origin: "user", timestamp: at(0) }
  }]
  let k = 0
  const item = (type: "item.started" | "item.updated" | "item.completed", value: ThreadItem): void => {
    events.push({ type, item: value })
  }
  // One "step" of agent work per iteration; each pushes 1–3 events until `middle` is reached.
  const steps: Array<() => void> = [
    () =>
      item("item.completed", {
        context: ctx(++k),
        id: `r${turn}-${k}`,
        type: "reasoning",
        text: sentence(rng, 150, 450),
        stage: "analysis"
      }),
    () => {
      const id = `c${turn}-${++k}`
      const command = rng.pick(COMMANDS)
      item("item.started", {
        context: ctx(k, "inspection"),
        id,
        type: "command_execution",
        command,
        aggregated_output: "",
        status: "in_progress"
      })
      item("item.completed", {
        context: ctx(++k, "inspection"),
        id,
        type: "command_execution",
        command,
        aggregated_output: output(rng, 200, 900),
        exit_code: rng.int(0, 3) === 0 ? 1 : 0,
        status: "completed"
      })
    },
    () => {
      const id = `t${turn}-${++k}`
      const tool = rng.pick(TOOLS)
      const args = { path: rng.pick(PATHS), limit: rng.int(10, 400) }
      const call = `call_${turn}_${k}`
      item("item.started", {
        context: ctx(k),
        id,
        type: "tool_invocation",
        tool_name: tool,
        arguments: args,
        tool_call_id: call,
        status: "in_progress"
      })
      item("item.completed", {
        context: ctx(++k),
        id,
        type: "tool_invocation",
        tool_name: tool,
        arguments: args,
        tool_call_id: call,
        status: "completed",
        outcome: "success"
      })
      item("item.completed", {
        context: ctx(++k),
        id: `o${turn}-${k}`,
        type: "tool_output",
        call_id: id,
        output: output(rng, 150, 700),
        status: "completed"
      })
    },
    () => {
      events.push({ type: "permission.requested", tool_name: "apply_patch" })
      events.push({
        type: "permission.resolved",
        tool_name: "apply_patch",
        decision: "allow",
        wait_ms: rng.int(50, 4000)
      })
    },
    () => {
      const path = rng.pick(PATHS)
      item("item.completed", {
        context: ctx(++k, "mutation"),
        id: `f${turn}-${k}`,
        type: "file_change",
        changes: [{ path, kind: "update" }],
        status: "completed",
        unified_diff: diff(rng, path),
        additions: rng.int(1, 20),
        deletions: rng.int(0, 10)
      })
    },
    () => {
      const id = `m${turn}-${++k}`
      const text = sentence(rng, 100, 300)
      item("item.updated", { context: ctx(k), id, type: "agent_message", text: text.slice(0, text.length >> 1) })
      item("item.completed", { context: ctx(++k), id, type: "agent_message", text })
    }
  ]
  let step = 0
  while (events.length < middle + 1) {
    const run = steps[step++ % steps.length]
    if (run !== undefined) run()
  }
  events.length = middle + 1
  events.push({
    type: "turn.completed",
    completed_at: at(k + 1),
    usage: {
      input_tokens: rng.int(2_000, 90_000),
      cached_input_tokens: rng.int(0, 60_000),
      cache_creation_tokens: rng.int(0, 4_000),
      output_tokens: rng.int(100, 4_000)
    }
  })
  return events
}

/** `count` complete turns (numbered from 1) from `seed`. */
export const makeTurns = (seed: number, count: number): Array<Array<ThreadEvent>> => {
  const rng = makeRng(seed)
  const turns: Array<Array<ThreadEvent>> = []
  for (let t = 1; t <= count; t++) turns.push(makeTurn(rng, t))
  return turns
}

/** `count` in-turn events (no lifecycle boundaries), taken from the middles of successive turns. */
export const makeInTurnEvents = (seed: number, count: number): Array<ThreadEvent> => {
  const rng = makeRng(seed)
  const events: Array<ThreadEvent> = []
  for (let t = 1; events.length < count; t++) events.push(...makeTurn(rng, t).slice(1, -1))
  events.length = count
  return events
}

/** The envelope line a plain JSON writer produces for `event` (no trailing newline). */
export const plainLine = (event: ThreadEvent): string => JSON.stringify({ schema_version: EVENT_SCHEMA_VERSION, event })

/** UTF-8 byte length of the envelope lines of `events`, newlines included. */
export const lineBytes = (events: ReadonlyArray<ThreadEvent>): number => {
  let total = 0
  for (const event of events) total += Buffer.byteLength(plainLine(event)) + 1
  return total
}

/**
 * Whether Logbook's canonical encoder and the baselines' `JSON.stringify` agree byte for byte
 * on `events`; if they did not, the two sides of a ratio would not be doing the same work.
 */
export const sameBytes = (events: ReadonlyArray<ThreadEvent>): boolean =>
  events.every((event) => encodeLine(event) === plainLine(event))
