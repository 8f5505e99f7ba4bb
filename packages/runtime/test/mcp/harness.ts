/**
 * Support of the `logbook mcp` contract tests: a store of the real imported fixtures, and the
 * official MCP TypeScript SDK client (`@modelcontextprotocol/sdk`) connected over stdio to the
 * built CLI (`bin/logbook.js … mcp`), as Claude Code would start it.
 */
import { tempDir } from "@logbook/testkit"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Context, Effect, Layer } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assertBuilt } from "../cli/harness.ts"
import { logbook } from "../cli/inProcess.ts"

/** The bin shim the package links as `logbook`. */
export const LOGBOOK_JS = fileURLToPath(new URL("../../bin/logbook.js", import.meta.url))

const realdata = path.join(import.meta.dirname, "..", "..", "..", "projections", "test", "fixtures", "realdata")

/** Imports the real Codex and Claude fixtures into `dir` (five sessions). */
export const importRealSessions = (dir: string) =>
  Effect.gen(function*() {
    for (const [agent, folder] of [["codex", "codex-rollout"], ["claude", "claude-code"]] as const) {
      const run = yield* logbook(["--sessions-dir", dir, "import", agent, path.join(realdata, folder)])
      if (run.exitCode !== 0) return yield* Effect.die(new Error(`import ${agent} failed: ${run.stderr}`))
    }
  })

/** The environment of the server process: the tests' own, without a sessions root override. */
const childEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== "LOGBOOK_SESSIONS_DIR") env[k] = v
  }
  return env
}

/** An SDK client connected to `logbook --sessions-dir <dir> mcp`, closed (the server with it) with the scope. */
export const connect = (dir: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [LOGBOOK_JS, "--sessions-dir", dir, "mcp"],
        env: childEnv(),
        stderr: "pipe"
      })
      const client = new Client({ name: "logbook-contract-test", version: "1.0.0" })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** The store and the connected client every test of a suite shares. */
export class McpFixture extends Context.Service<McpFixture, {
  readonly dir: string
  readonly client: Client
}>()("test/mcp/McpFixture") {
  static readonly layer = Layer.effect(
    McpFixture,
    Effect.gen(function*() {
      assertBuilt()
      const dir = yield* tempDir("mcp")
      yield* importRealSessions(dir)
      const client = yield* connect(dir)
      return McpFixture.of({ dir, client })
    })
  )
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** One tool call's result as the SDK returns it. */
export interface ToolResult {
  readonly isError: boolean
  readonly text: string
  readonly structured: Record<string, unknown>
}

/** Calls a tool through the SDK client (which checks the structured result against the tool's output schema). */
export const callTool = (name: string, args: Record<string, unknown>) =>
  Effect.gen(function*() {
    const { client } = yield* McpFixture
    const result = yield* Effect.promise(() => client.callTool({ name, arguments: args }))
    const content = Array.isArray(result.content) ? result.content : []
    const first: unknown = content[0]
    const text = typeof first === "object" && first !== null && "text" in first && typeof first.text === "string"
      ? first.text
      : ""
    const raw: unknown = result.structuredContent
    const structured: Record<string, unknown> = isRecord(raw) ? raw : {}
    return { isError: result.isError === true, text, structured } satisfies ToolResult
  })

/** Runs `logbook --sessions-dir <store> <args> --json` in-process and parses its stdout. */
export const cliJson = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { dir } = yield* McpFixture
    const run = yield* logbook(["--sessions-dir", dir, ...args, "--json"])
    if (run.exitCode !== 0) return yield* Effect.die(new Error(`logbook ${args.join(" ")}: ${run.stderr}`))
    const parsed: unknown = JSON.parse(run.stdout)
    return parsed
  })
