import { EventLog } from "@logbook/store"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { makeTurns } from "./bench/lib/events.ts"
import { runStore, uncapped } from "./bench/lib/logbook.ts"
const sessionsDir = "/tmp/p12/store"
if (!Fs.existsSync(sessionsDir)) {
  await runStore(Effect.gen(function*() {
    for (let s = 0; s < 40; s++) {
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* EventLog.open({ sessionsDir, sessionId: `p12-${s}`, ...uncapped })
        for (const turn of makeTurns(100 + s, 20)) yield* log.appendAll(turn)
      }))
    }
  }))
}
const client = new Client({ name: "x", version: "1" })
await client.connect(new StdioClientTransport({ command: process.execPath, args: [...(process.env.PROF ? ["--cpu-prof", "--cpu-prof-dir=/tmp/p12/prof"] : []), "packages/runtime/dist/bin.js", "--sessions-dir", sessionsDir, "mcp"], stderr: "inherit" }))
const ts: number[] = []
for (let i = 0; i < 300; i++) {
  const t0 = performance.now()
  const r = await client.callTool({ name: "read_turn", arguments: { session: "p12-3", turn: 5 } })
  ts.push(performance.now() - t0)
  if (i === 0) console.log(JSON.stringify(r).length, JSON.stringify(r).slice(0, 400))
}
ts.sort((a, b) => a - b)
console.log("p50", ts[150].toFixed(2))
await client.close()
