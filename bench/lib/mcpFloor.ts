/**
 * The floor under P12's goals: what the MCP stack the issue requires costs before Logbook does
 * anything. `mcpFloorServer.ts` (one `echo` tool on `effect/ai`'s `McpServer`) is bundled with
 * rolldown and started with a V8 code cache, the way `bin/logbook.js` starts the CLI's bundle,
 * then measured through the same SDK client as P12: the cold first call (spawn → initialize →
 * one call → close) and warm calls that carry as many characters as the results they stand for.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { build } from "rolldown"
import { median } from "./measure.ts"

/** The floor's medians, in milliseconds. */
export interface McpFloor {
  readonly cold: number
  /** Per size asked for, the median of a warm call carrying that many characters. */
  readonly warm: ReadonlyArray<number>
}

// Runs the bundle with a code cache, written when the first run exits.
const LOADER =
  `const fs = require("node:fs"), vm = require("node:vm"), path = require("node:path"), mod = require("node:module")
const file = path.join(__dirname, "floor.cjs"), cache = file + ".cache"
const cached = fs.existsSync(cache) ? fs.readFileSync(cache) : undefined
const script = new vm.Script(mod.wrap(fs.readFileSync(file, "latin1")), { filename: file, cachedData: cached })
if (cached === undefined || script.cachedDataRejected) process.on("exit", () => fs.writeFileSync(cache, script.createCachedData()))
script.runInThisContext()(module.exports, require, module, file, __dirname)
`

const connect = async (loader: string): Promise<Client> => {
  const client = new Client({ name: "logbook-bench-floor", version: "1.0.0" })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [loader], stderr: "ignore" }))
  return client
}

/** Builds the floor server under `dir` and measures `coldRounds` cold calls, `warmRounds` warm ones per size. */
export const measureMcpFloor = async (
  dir: string,
  sizes: ReadonlyArray<number>,
  coldRounds: number,
  warmRounds: number
): Promise<McpFloor> => {
  Fs.mkdirSync(dir, { recursive: true })
  await build({
    input: Path.join(import.meta.dirname, "mcpFloorServer.ts"),
    platform: "node",
    external: [/^node:/u],
    treeshake: true,
    logLevel: "warn",
    transform: { define: { "import.meta.env": "undefined" } },
    output: { file: Path.join(dir, "floor.cjs"), format: "cjs", minify: true }
  })
  const loader = Path.join(dir, "floor-loader.cjs")
  Fs.writeFileSync(loader, LOADER)
  const cold: Array<number> = []
  // The first round writes the code cache and is not measured.
  for (let round = 0; round <= coldRounds; round++) {
    const t0 = performance.now()
    const client = await connect(loader)
    await client.callTool({ name: "echo", arguments: { size: 10 } })
    await client.close()
    if (round > 0) cold.push(performance.now() - t0)
  }
  const client = await connect(loader)
  const warm: Array<Array<number>> = sizes.map(() => [])
  try {
    for (let round = 0; round <= warmRounds; round++) {
      for (const [i, size] of sizes.entries()) {
        const t0 = performance.now()
        await client.callTool({ name: "echo", arguments: { size } })
        if (round > 0) warm[i]?.push(performance.now() - t0)
      }
    }
  } finally {
    await client.close()
  }
  Fs.rmSync(dir, { recursive: true, force: true })
  return { cold: median(cold), warm: warm.map(median) }
}
