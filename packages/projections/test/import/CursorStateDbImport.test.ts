/**
 * The Cursor importer on the IDE's `state.vscdb`, built by the test from the hand-written rows in
 * `test/fixtures/handwritten/cursor-vscdb/state-vscdb.rows.json` (PROVENANCE.md there): an agent
 * chat with reasoning, a terminal command with its exit code, an edit with its diff, a failed
 * tool, a bubble the chat names but the table lacks and one that is not JSON; an empty chat; an
 * older chat with its bubbles inline (stored as a BLOB). Turns = prompts, texts, commands, tokens
 * and times against the rows, `verify` clean, re-import byte-identical, `--dry-run` writes nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { DEFAULT_IDLE_WINDOW_MS, importSessions } from "../../src/import/Importer.ts"
import { verifySession } from "../../src/session/Verification.ts"
import { buildVscdb, cursorRows as rows, LEGACY } from "./support/cursorVscdb.ts"
import { eventsOf, items } from "./support/sessionEvents.ts"

const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

const AGENT = "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"

interface Bubble {
  readonly type: number
  readonly text?: string
  readonly createdAt?: string
  readonly tokenCount?: { readonly inputTokens: number; readonly outputTokens: number }
}
const bubblesOf = (composer: string): Array<Bubble> =>
  rows.flatMap((r) => r.key.startsWith(`bubbleId:${composer}:`) && r.value !== undefined ? [r.value as Bubble] : [])

const run = (sessionsDir: string, format: "cursor" | "auto", paths: ReadonlyArray<string>, dryRun = false) =>
  importSessions({ sessionsDir, format, paths, dryRun }).pipe(Effect.provide(storeLayer))

describe("Importer on Cursor's state.vscdb", () => {
  it.effect("each chat becomes cursor-ide-<id>: prompts, texts, the command, the edit, tokens and times", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_766_691_330_000 + DEFAULT_IDLE_WINDOW_MS)
      const sessions = yield* tempDir("cursor-vscdb")
      const dir = yield* tempDir("cursor-vscdb-src")
      const db = path.join(dir, "state.vscdb")
      buildVscdb(db)

      const dry = yield* run(sessions, "cursor", [dir], true)
      assert.strictEqual(dry.sources.length, 2)
      assert.deepStrictEqual(fs.readdirSync(sessions), [])

      const report = yield* run(sessions, "cursor", [dir])
      const byPath = Object.fromEntries(report.sources.map((s) => [s.path, s]))
      // The empty chat is passed over; the two used ones are created.
      assert.deepStrictEqual(Object.keys(byPath).sort(), [`${db}#${LEGACY}`, `${db}#${AGENT}`].sort())
      const agent = byPath[`${db}#${AGENT}`]
      assert.strictEqual(agent?.status, "created")
      assert.deepStrictEqual(agent?.lines_skipped.map((l) => [l.line, l.reason.split(":")[0]]), [
        [7, "bubble a5"],
        [9, "bubble a7"]
      ])
      assert.match(agent?.lines_skipped[1]?.reason ?? "", /not JSON/)

      const events = eventsOf(sessions, `cursor-ide-${AGENT}`)
      const bubbles = bubblesOf(AGENT)
      assert.strictEqual(
        events.filter((e) => e.type === "turn.started").length,
        bubbles.filter((b) => b.type === 1).length
      )
      const all = items(events)
      assert.deepStrictEqual(
        all.flatMap((i) => i.type === "agent_message" ? [i.text] : []),
        bubbles.flatMap((b) => b.type === 2 && (b.text ?? "").length > 0 ? [b.text] : [])
      )
      assert.deepStrictEqual(all.flatMap((i) => i.type === "reasoning" ? [i.text] : []), ["Run the tests first."])
      assert.deepStrictEqual(
        all.flatMap((i) => i.type === "command_execution" ? [[i.command, i.aggregated_output, i.exit_code]] : []),
        [["npm test", "FAIL sum.test.ts", 1]]
      )
      const edit = all.find((i) => i.type === "file_change")
      assert.strictEqual(
        edit?.type === "file_change" ? edit.unified_diff : undefined,
        "--- a/src/sum.ts\n+++ b/src/sum.ts\n@@\n-a + b + 1\n+a + b\n"
      )
      const failed = all.find((i) => i.type === "tool_invocation")
      assert.deepStrictEqual(
        failed?.type === "tool_invocation" ? [failed.tool_name, failed.status] : [],
        ["codebase_search", "failed"]
      )
      const spent = events.reduce(
        (n, e) =>
          e.type === "turn.completed"
            ? { input: n.input + (e.usage?.input_tokens ?? 0), output: n.output + (e.usage?.output_tokens ?? 0) }
            : n,
        { input: 0, output: 0 }
      )
      assert.deepStrictEqual(spent, {
        input: bubbles.reduce((n, b) => n + (b.tokenCount?.inputTokens ?? 0), 0),
        output: bubbles.reduce((n, b) => n + (b.tokenCount?.outputTokens ?? 0), 0)
      })
      const manifest = JSON.parse(fs.readFileSync(sessionPaths(sessions, `cursor-ide-${AGENT}`).manifest, "utf8"))
      assert.strictEqual(Date.parse(manifest["created_at"]), 1_766_691_308_000)
      // The last time a bubble carries (the second prompt's; the bubbles after it have none).
      assert.strictEqual(Date.parse(manifest["updated_at"]), Date.parse("2025-12-25T19:35:25.000Z"))
      const verified = yield* verifySession(sessions, `cursor-ide-${AGENT}`).pipe(Effect.provide(storeLayer))
      assert.deepStrictEqual(verified.findings, [])

      const legacy = items(eventsOf(sessions, `cursor-ide-${LEGACY}`))
      assert.deepStrictEqual(legacy.flatMap((i) => i.type === "agent_message" ? [i.text] : []), [
        "It adds two numbers."
      ])

      const before = fs.readFileSync(sessionPaths(sessions, `cursor-ide-${AGENT}`).events, "base64")
      const again = yield* run(sessions, "auto", [db])
      assert.strictEqual(again.sessions_unchanged, 2, JSON.stringify(again.sources))
      assert.strictEqual(fs.readFileSync(sessionPaths(sessions, `cursor-ide-${AGENT}`).events, "base64"), before)
    }))

  it.effect("a chat imported while Cursor still generates, then finished, equals the finished chat imported at once", () =>
    Effect.gen(function*() {
      const finishedAt = 1_766_691_330_000 + DEFAULT_IDLE_WINDOW_MS
      yield* TestClock.setTime(finishedAt)
      const whole = yield* tempDir("cursor-vscdb-whole")
      const dir = yield* tempDir("cursor-vscdb-live-src")
      const db = path.join(dir, "state.vscdb")
      buildVscdb(db)
      yield* run(whole, "cursor", [db])
      const sessions = yield* tempDir("cursor-vscdb-live")
      // The chat as it stood while the fourth assistant bubble was being generated.
      const live = rows.map((r) => {
        if (r.key !== `composerData:${AGENT}` || typeof r.value !== "object" || r.value === null) return r
        const composer = r.value as { readonly fullConversationHeadersOnly: ReadonlyArray<unknown> }
        return {
          key: r.key,
          value: {
            ...composer,
            status: "generating",
            lastUpdatedAt: 1_766_691_322_000,
            fullConversationHeadersOnly: composer.fullConversationHeadersOnly.slice(0, 5)
          }
        }
      })
      fs.rmSync(db)
      buildVscdb(db, live)
      yield* TestClock.setTime(1_766_691_323_000)
      const first = yield* run(sessions, "cursor", [db])
      assert.strictEqual(first.sessions_created, 2, JSON.stringify(first.sources))
      const partial = items(eventsOf(sessions, `cursor-ide-${AGENT}`))
      assert.strictEqual(partial.some((i) => i.type === "agent_message"), false)
      fs.rmSync(db)
      buildVscdb(db)
      yield* TestClock.setTime(finishedAt)
      const second = yield* run(sessions, "cursor", [db])
      assert.strictEqual(second.sessions_updated, 1, JSON.stringify(second.sources))
      const log = (root: string) => fs.readFileSync(sessionPaths(root, `cursor-ide-${AGENT}`).events, "base64")
      assert.strictEqual(log(sessions), log(whole))
    }))

  it.effect("a database without cursorDiskKV fails in import cursor and is ignored by import auto", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("cursor-vscdb-foreign")
      const dir = yield* tempDir("cursor-vscdb-foreign-src")
      const db = new DatabaseSync(path.join(dir, "state.vscdb"))
      db.exec("CREATE TABLE ItemTable (key TEXT, value BLOB)")
      db.close()
      const strict = yield* run(sessions, "cursor", [dir])
      assert.deepStrictEqual(strict.sources.map((s) => [s.status, s.reason]), [[
        "failed",
        "not a Cursor state.vscdb (expected a cursorDiskKV table, or an ItemTable with Cursor's chats)"
      ]])
      const auto = yield* run(sessions, "auto", [dir])
      assert.deepStrictEqual(auto.sources.map((s) => s.status), ["ignored"])
    }))
})
