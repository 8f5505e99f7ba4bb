/**
 * The OpenCode importer on the hand-written `opencode export` document in
 * `test/fixtures/handwritten/opencode` (PROVENANCE.md there): turns equal prompts, texts,
 * commands with output and exit code, the edit with its unified diff, tokens equal the source's
 * `step-finish` parts, source times, `verify` clean, re-import byte-identical; a file that is not
 * an export fails as its own source.
 */
import { assert, describe, it } from "@effect/vitest"
import { SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { DEFAULT_IDLE_WINDOW_MS, importSessions } from "../../src/import/Importer.ts"
import { verifySession } from "../../src/session/Verification.ts"
import { eventsOf, items } from "./support/sessionEvents.ts"

const file = path.join(import.meta.dirname, "..", "fixtures", "handwritten", "opencode", "ses_0hw1.export.json")
const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)
interface Part {
  readonly type: string
  readonly text?: string
  readonly tokens?: { readonly output: number; readonly reasoning: number }
}
interface Message {
  readonly info: { readonly role: string; readonly time: { readonly created: number } }
  readonly parts: ReadonlyArray<Part>
}
interface ExportDoc {
  readonly info: { readonly time: { readonly created: number } }
  readonly messages: ReadonlyArray<Message>
}
const doc: ExportDoc = JSON.parse(fs.readFileSync(file, "utf8"))

const run = (sessionsDir: string, format: "opencode" | "auto", paths: ReadonlyArray<string>) =>
  importSessions({ sessionsDir, format, paths }).pipe(Effect.provide(storeLayer))

describe("Importer on an opencode export", () => {
  it.effect("prompts, texts, commands, the diff, tokens and times match the export; verify is clean", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("import-opencode")
      const src = yield* tempDir("import-opencode-src")
      const copy = path.join(src, "s.json")
      fs.copyFileSync(file, copy)
      fs.writeFileSync(path.join(src, "other.json"), JSON.stringify({ info: { id: "x" }, messages: 3 }))
      fs.utimesSync(copy, 1_700_000_000, 1_700_000_000)
      yield* TestClock.setTime(1_700_000_000_000 + DEFAULT_IDLE_WINDOW_MS)
      const report = yield* run(sessions, "opencode", [src])
      const byName = Object.fromEntries(report.sources.map((s) => [path.basename(s.path), s.status]))
      assert.deepStrictEqual(byName, { "other.json": "failed", "s.json": "created" })
      const events = eventsOf(sessions, "opencode-ses_0hw1")
      const messages = doc.messages
      const prompts = messages.filter((m) => m.info.role === "user")
      assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts.length)
      const texts = messages.flatMap((m) =>
        m.info.role === "assistant" ? m.parts.filter((p) => p.type === "text").map((p) => p.text ?? "") : []
      )
      assert.deepStrictEqual(items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []), texts)
      assert.deepStrictEqual(
        items(events).flatMap((i) =>
          i.type === "command_execution" ? [[i.command, i.aggregated_output, i.exit_code]] : []
        ),
        [["npm test", "FAIL sum.test.ts", 1], ["npm test", "PASS sum.test.ts", 0]]
      )
      const edit = items(events).find((i) => i.type === "file_change")
      assert.strictEqual(edit?.type === "file_change" ? edit.unified_diff?.includes("+export const sum") : false, true)
      const sourceOutput = messages.flatMap((m) => m.parts).filter((p) => p.type === "step-finish").reduce(
        (n, p) => n + (p.tokens?.output ?? 0) + (p.tokens?.reasoning ?? 0),
        0
      )
      const completed = events.find((e) => e.type === "thread.completed")
      assert.strictEqual(completed?.type === "thread.completed" ? completed.usage.output_tokens : -1, sourceOutput)
      const manifest = JSON.parse(fs.readFileSync(sessionPaths(sessions, "opencode-ses_0hw1").manifest, "utf8"))
      assert.strictEqual(Date.parse(manifest["created_at"]), doc.info.time.created)
      assert.strictEqual(Date.parse(manifest["updated_at"]), messages[messages.length - 1]?.info.time.created)
      const verified = yield* verifySession(sessions, "opencode-ses_0hw1").pipe(Effect.provide(storeLayer))
      assert.deepStrictEqual(verified.findings, [])
      const before = fs.readFileSync(sessionPaths(sessions, "opencode-ses_0hw1").events, "base64")
      const again = yield* run(sessions, "auto", [copy])
      assert.strictEqual(again.sessions_unchanged, 1, JSON.stringify(again.sources))
      assert.strictEqual(fs.readFileSync(sessionPaths(sessions, "opencode-ses_0hw1").events, "base64"), before)
    }))
})
