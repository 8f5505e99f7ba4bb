/**
 * P12 — `logbook mcp` (docs/mcp.md; goals: warm p50 of a `search` and a `read_turn` tool call
 * ≤ 1.5 × the same question asked in-process, cold first call ≤ 3 × `node -e 0`).
 * Store: 40 seeded sessions of 20 turns each. Measured through the official MCP SDK client
 * (`@modelcontextprotocol/sdk`, `StdioClientTransport` spawning `bin/logbook.js mcp`, as an agent
 * host starts it): warm `search` (scope history) and `read_turn` calls, alternating with the
 * baselines — `searchMemory` and `readTurn` + collect in this process, over a warm index cache.
 * Cold: spawn → initialize → the first `search` result, against `node -e 0` started the same way.
 * Floor: the same two figures for a one-tool server on the same MCP stack (lib/mcpFloor.ts), so
 * the report shows how much of each goal that stack leaves to Logbook.
 */
import { readTurn, SearchIndexCache, searchMemory } from "@logbook/projections"
import { EventLog, ManifestCache } from "@logbook/store"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import { makeTurns } from "./lib/events.ts"
import { runStore, storeLayer, uncapped } from "./lib/logbook.ts"
import { measureMcpFloor } from "./lib/mcpFloor.ts"
import type { Outcome } from "./lib/measure.ts"
import { median, ms } from "./lib/measure.ts"

const BIN = Path.join(import.meta.dirname, "..", "packages", "runtime", "bin", "logbook.js")
const SESSIONS = 40
const TURNS = 20
const NOW = 1_800_000_000

const env = (): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "LOGBOOK_SESSIONS_DIR") out[k] = v
  return out
}

const connect = async (sessionsDir: string): Promise<Client> => {
  const client = new Client({ name: "logbook-bench", version: "1.0.0" })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "--sessions-dir", sessionsDir, "mcp"],
      env: env(),
      stderr: "ignore"
    })
  )
  return client
}

const timeAsync = async (f: () => Promise<unknown>): Promise<number> => {
  const t0 = performance.now()
  await f()
  return performance.now() - t0
}

/** Words of the seeded agent messages, to search for. */
const queryWords = (): string => {
  for (const turn of makeTurns(1, 1)) {
    for (const event of turn) {
      if (event.type === "item.completed" && event.item.type === "agent_message") {
        return event.item.text.split(/\s+/u).filter((w) => w.length > 3).slice(0, 2).join(" ")
      }
    }
  }
  return "build test"
}

/** Runs P12 and prints its medians. */
export const runP12 = async (ctx: BenchContext): Promise<Outcome> => {
  const sessionsDir = Path.join(ctx.root, "p12")
  await runStore(Effect.gen(function*() {
    for (let s = 0; s < SESSIONS; s++) {
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* EventLog.open({ sessionsDir, sessionId: `p12-${s}`, ...uncapped })
        for (const turn of makeTurns(100 + s, TURNS)) yield* log.appendAll(turn)
      }))
    }
  }))
  const query = queryWords()
  const runtime = ManagedRuntime.make(Layer.mergeAll(storeLayer, ManifestCache.layer, SearchIndexCache.layer))
  const inSearch = () =>
    runtime.runPromise(searchMemory(sessionsDir, query, { scope: "history", maxResults: 6, now: NOW }))
  const inTurn = () =>
    runtime.runPromise(
      Effect.flatMap(readTurn(sessionsDir, "p12-3", 5), (t) => Stream.runCollect(t.records))
    )
  const client = await connect(sessionsDir)
  const mcpSearch = () =>
    client.callTool({ name: "search", arguments: { query, scope: "history", limit: 6, now: NOW } })
  const mcpTurn = () => client.callTool({ name: "read_turn", arguments: { session: "p12-3", turn: 5 } })
  const rounds = ctx.profile.quick ? 30 : 150
  let turnChars = 0
  let searchChars = 0
  const samples: Record<"inSearch" | "mcpSearch" | "inTurn" | "mcpTurn", Array<number>> = {
    inSearch: [],
    mcpSearch: [],
    inTurn: [],
    mcpTurn: []
  }
  try {
    for (let round = 0; round <= rounds; round++) {
      const measured = [
        ["inSearch", await timeAsync(inSearch)],
        ["mcpSearch", await timeAsync(mcpSearch)],
        ["inTurn", await timeAsync(inTurn)],
        ["mcpTurn", await timeAsync(mcpTurn)]
      ] as const
      if (round > 0) { for (const [k, v] of measured) samples[k].push(v) }
    }
    turnChars = JSON.stringify((await mcpTurn()).structuredContent).length
    searchChars = JSON.stringify((await mcpSearch()).structuredContent).length
  } finally {
    await client.close()
    await runtime.dispose()
  }
  const p50 = (k: keyof typeof samples) => median(samples[k])
  const searchRatio = p50("mcpSearch") / p50("inSearch")
  const turnRatio = p50("mcpTurn") / p50("inTurn")
  // Cold: spawn → initialize → first search result, against `node -e 0`; alternating, first round unmeasured.
  const coldRounds = ctx.profile.quick ? 3 : 7
  const cold: Array<number> = []
  const bare: Array<number> = []
  for (let round = 0; round <= coldRounds; round++) {
    const c = await timeAsync(async () => {
      const fresh = await connect(sessionsDir)
      await fresh.callTool({ name: "search", arguments: { query, scope: "history", now: NOW } })
      await fresh.close()
    })
    const t0 = performance.now()
    spawnSync(process.execPath, ["-e", "0"], { stdio: "ignore" })
    const b = performance.now() - t0
    if (round > 0) {
      cold.push(c)
      bare.push(b)
    }
  }
  const coldRatio = median(cold) / median(bare)
  // What the required MCP stack costs alone: a result of the read_turn page's size, and a cold call.
  const floor = await measureMcpFloor(Path.join(ctx.root, "p12-floor"), [searchChars, turnChars], coldRounds, rounds)
  const [floorSearch = Number.NaN, floorTurn = Number.NaN] = floor.warm
  console.log(`P12 logbook mcp: ${SESSIONS} sessions × ${TURNS} turns, ${rounds} alternating rounds (p50)`)
  console.log(
    `  search    mcp ${ms(p50("mcpSearch"))}  in-process ${ms(p50("inSearch"))}  ratio ${searchRatio.toFixed(2)}`
  )
  console.log(`  read_turn mcp ${ms(p50("mcpTurn"))}  in-process ${ms(p50("inTurn"))}  ratio ${turnRatio.toFixed(2)}`)
  console.log(`  cold first search ${ms(median(cold))}  node -e 0 ${ms(median(bare))}  ratio ${coldRatio.toFixed(2)}`)
  console.log(
    `  floor, a one-tool effect/ai McpServer (bundled, code cache): cold ${ms(floor.cold)} (ratio ${
      (floor.cold / median(bare)).toFixed(2)
    }), warm calls carrying ${searchChars} / ${turnChars} characters (a search / read_turn result) ${
      ms(floorSearch)
    } / ${ms(floorTurn)}`
  )
  console.log(
    `  so at best: read_turn ratio ${((p50("inTurn") + floorTurn) / p50("inTurn")).toFixed(2)}, search ${
      ((p50("inSearch") + floorSearch) / p50("inSearch")).toFixed(2)
    }, cold ${(floor.cold / median(bare)).toFixed(2)} (the in-process call plus the floor's)`
  )
  Fs.rmSync(sessionsDir, { recursive: true, force: true })
  const warm = Math.max(searchRatio, turnRatio)
  return {
    id: "P12",
    value: warm,
    text: `${warm.toFixed(2)} warm, ${coldRatio.toFixed(2)} cold`,
    goal: "≤ 1.5 warm, ≤ 3 cold",
    met: warm <= 1.5 && coldRatio <= 3
  }
}
