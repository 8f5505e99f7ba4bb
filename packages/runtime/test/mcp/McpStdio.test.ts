/**
 * `logbook mcp` as a process: stdout carries only JSON-RPC messages (even when a call fails),
 * and the server exits 0 once the client closes its stdin.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { assertBuilt } from "../cli/harness.ts"
import { LOGBOOK_JS } from "./harness.ts"

const messages = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "show_session", arguments: { session: "nope" } } },
  { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_sessions", arguments: {} } }
]

describe("logbook mcp over raw stdio", () => {
  it.live(
    "stdout holds only JSON-RPC responses, and the server exits 0 when stdin closes",
    () =>
      Effect.gen(function*() {
        assertBuilt()
        const dir = yield* tempDir("mcp-stdio")
        const { code, stdout } = yield* Effect.callback<{ code: number | null; stdout: string }>((resume) => {
          const child = spawn(process.execPath, [LOGBOOK_JS, "--sessions-dir", dir, "mcp"], { stdio: "pipe" })
          let out = ""
          child.stdout.on("data", (d: Buffer) => (out += d.toString()))
          child.on("close", (exitCode) => resume(Effect.succeed({ code: exitCode, stdout: out })))
          child.stdin.end(messages.map((m) => JSON.stringify(m)).join("\n") + "\n")
        })
        assert.strictEqual(code, 0)
        const lines = stdout.split("\n").filter((l) => l.length > 0)
        const parsed = lines.map((l) => JSON.parse(l) as { jsonrpc: string; id: number; result: { isError?: boolean } })
        assert.isTrue(parsed.every((m) => m.jsonrpc === "2.0"))
        assert.deepStrictEqual(parsed.map((m) => m.id).sort(), [1, 2, 3])
        assert.isTrue(parsed.find((m) => m.id === 2)?.result.isError)
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
