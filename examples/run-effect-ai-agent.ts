/**
 * Command-line entry of the effect/ai agent example: runs `tasks` tasks (default 3) into
 * `sessionId` (default `effect-ai-agent`) below `workspace` (default: the current directory),
 * printing `ack <n>` on stdout once task n's turn is durable (the crash test reads these lines)
 * and the final manifest as JSON.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { writeSync } from "node:fs"
import { runEffectAiAgent } from "./effect-ai-agent.ts"

const workspace = process.argv[2] ?? process.cwd()
const sessionId = process.argv[3] ?? "effect-ai-agent"
const count = Number(process.argv[4] ?? 3)
const tasks = Array.from({ length: count }, (_, i) => `Task ${i + 1}: make the cache test pass`)

NodeRuntime.runMain(
  runEffectAiAgent(workspace, sessionId, tasks, (n) => Effect.sync(() => void writeSync(1, `ack ${n}\n`))).pipe(
    Effect.flatMap((manifest) => Console.log(JSON.stringify(manifest)))
  )
)
