/**
 * Command-line entry of the simulated agent example: records three turns into the
 * workspace given as the first argument (default: the current directory).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { runSimulatedAgent } from "./simulated-agent.ts"

const workspace = process.argv[2] ?? process.cwd()

NodeRuntime.runMain(
  runSimulatedAgent(workspace, "example-session", 3).pipe(
    Effect.flatMap((manifest) => Console.log(JSON.stringify(manifest, null, 2)))
  )
)
