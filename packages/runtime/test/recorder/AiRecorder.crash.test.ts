/**
 * Crash loop of the recorder: a child process runs the example agent
 * (`examples/run-effect-ai-agent.ts`), printing `ack <n>` once task n's turn is durable, and is
 * SIGKILLed right after a seeded number of acks (0 = while it opens or records its first turn).
 * The waits are event-driven (the ack lines, the exit event), never timed. After every kill the
 * session is reopened and closed through `SessionMemory`, and its log must hold every acknowledged
 * turn as completed, every turn in the order the child started them, and no phantom turn: only
 * the last turn of a life may be left open (the kill landed inside it), and it is the next task.
 *
 * `LOGBOOK_RECORDER_CRASH_ITERATIONS` (default 4) and `LOGBOOK_RECORDER_CRASH_SEED` select a
 * longer or different run (the long suite runs ≥ 200).
 */
import { assert, describe, it } from "@effect/vitest"
import { mulberry32, tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { SessionMemory } from "../../src/SessionMemory.ts"

const ITERATIONS = Number(process.env["LOGBOOK_RECORDER_CRASH_ITERATIONS"] ?? 4)
const SEED = Number(process.env["LOGBOOK_RECORDER_CRASH_SEED"] ?? 20261202)
const AGENT = fileURLToPath(new URL("../../../../examples/run-effect-ai-agent.ts", import.meta.url))

/** Runs the agent until `acks` acks were read (then SIGKILL); resolves with every ack it printed. */
const runAndKill = (workspace: string, acks: number) =>
  Effect.callback<ReadonlyArray<number>>((resume) => {
    const child = spawn(process.execPath, ["--conditions=@logbook/source", AGENT, workspace, "crash", "100000"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    const seen: Array<number> = []
    let buffered = ""
    if (acks === 0) child.kill("SIGKILL")
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8")
      const lines = buffered.split("\n")
      buffered = lines.pop() ?? ""
      for (const line of lines) {
        const match = /^ack (\d+)$/.exec(line)
        if (match?.[1] !== undefined) seen.push(Number(match[1]))
        if (seen.length === acks) child.kill("SIGKILL")
      }
    })
    child.on("exit", () => resume(Effect.succeed(seen)))
  })

interface LoggedTurn {
  readonly goal: string
  status: "open" | "completed" | "failed"
}

const turnsOf = (eventsPath: string): Array<LoggedTurn> => {
  const turns: Array<LoggedTurn> = []
  const text = fs.existsSync(eventsPath) ? fs.readFileSync(eventsPath, "utf8") : ""
  for (const line of text.split("\n")) {
    if (line.length === 0) continue
    const event = JSON.parse(line).event
    if (event.type === "turn.started") turns.push({ goal: event.context?.goal ?? "", status: "open" })
    const last = turns[turns.length - 1]
    if (last !== undefined && event.type === "turn.completed") last.status = "completed"
    if (last !== undefined && event.type === "turn.failed") last.status = "failed"
  }
  return turns
}

const taskGoal = (n: number) => `Task ${n}: make the cache test pass`

describe("AiRecorder crash loop", () => {
  it.live(
    `the example agent SIGKILLed at ${ITERATIONS} seeded instants keeps every acknowledged turn and no phantom one`,
    () =>
      Effect.gen(function*() {
        const rng = mulberry32(SEED)
        const workspace = yield* tempDir("logbook-recorder-crash-")
        const eventsPath = path.join(workspace, ".logbook", "sessions", "crash", "events.jsonl")
        /** Turns of earlier lives, as the reopened log held them. */
        let before: Array<LoggedTurn> = []
        for (let i = 0; i < ITERATIONS; i++) {
          const acked = yield* runAndKill(workspace, rng.int(0, 3))
          // Reopening recovers the log (torn tail, metadata) the way a restarted host would.
          yield* Effect.void.pipe(
            Effect.provide(
              SessionMemory.layerNode({ workspace, sessionId: "crash", retention: false, deriveMemory: false })
            )
          )
          const turns = turnsOf(eventsPath)
          const label = `life ${i + 1} (acked ${acked.join(",") || "none"})`
          assert.deepStrictEqual(turns.slice(0, before.length), before, `${label}: earlier turns are unchanged`)
          const life = turns.slice(before.length)
          life.forEach((turn, k) => {
            assert.strictEqual(turn.goal, taskGoal(k + 1), `${label}: turn ${k + 1} is the task the child started`)
            if (k < life.length - 1) {
              assert.strictEqual(turn.status, "completed", `${label}: only the last turn may be open`)
            }
          })
          for (const n of acked) assert.strictEqual(life[n - 1]?.status, "completed", `${label}: acked turn ${n}`)
          before = turns
        }
      }),
    { timeout: 600_000 }
  )
})
