/**
 * The Cursor importer on a real workspace `state.vscdb` of Cursor 0.4x (November 2024,
 * `test/fixtures/realdata/cursor-ide/`, PROVENANCE.md there), which keeps its chats in VS Code's
 * `ItemTable`: 26 composers with their bubbles inline (`composer.composerData`) and 5 chat panel
 * tabs (`workbench.panel.aichat.view.aichat.chatdata`). Read here with `node:sqlite` independently
 * of the importer: one session per used chat, turns = prompts, texts, no command or token (the
 * source records none), source times, `verify` clean, re-import byte-identical, and a tab that
 * gained bubbles imports to the same log as importing it whole.
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
import { eventsOf, items } from "./support/sessionEvents.ts"

const fixture = path.join(
  import.meta.dirname,
  "..",
  "fixtures",
  "realdata",
  "cursor-ide",
  "cursor-history",
  "state.vscdb"
)
const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

const COMPOSERS = "composer.composerData"
const CHATS = "workbench.panel.aichat.view.aichat.chatdata"

const itemValue = (file: string, key: string): unknown => {
  const db = new DatabaseSync(file, { readOnly: true })
  try {
    const row = db.prepare("SELECT value FROM ItemTable WHERE key = ?").get(key)
    const value = row?.["value"]
    return JSON.parse(typeof value === "string" ? value : new TextDecoder().decode(value as Uint8Array))
  } finally {
    db.close()
  }
}

/** One chat of the source as the test reads it: who spoke, what, and the chat's times. */
interface SourceChat {
  readonly id: string
  readonly created: number
  readonly updated: number
  readonly bubbles: ReadonlyArray<{ readonly user: boolean; readonly text: string }>
}
interface RawComposer {
  readonly composerId: string
  readonly createdAt: number
  readonly lastUpdatedAt?: number
  readonly conversation: ReadonlyArray<{ readonly type: number; readonly text?: string }>
}
interface RawTab {
  readonly tabId: string
  readonly lastSendTime: number
  readonly bubbles: ReadonlyArray<{ readonly type: string; readonly text?: string }>
}
const composers = (itemValue(fixture, COMPOSERS) as { readonly allComposers: ReadonlyArray<RawComposer> })
  .allComposers
const tabs = (itemValue(fixture, CHATS) as { readonly tabs: ReadonlyArray<RawTab> }).tabs
const chats: ReadonlyArray<SourceChat> = [
  ...composers.filter((c) => c.conversation.length > 0).map((c) => ({
    id: c.composerId,
    created: c.createdAt,
    updated: c.lastUpdatedAt ?? c.createdAt,
    bubbles: c.conversation.map((b) => ({ user: b.type === 1, text: b.text ?? "" }))
  })),
  ...tabs.filter((t) => t.bubbles.length > 0).map((t) => ({
    id: t.tabId,
    created: t.lastSendTime,
    updated: t.lastSendTime,
    bubbles: t.bubbles.map((b) => ({ user: b.type === "user", text: b.text ?? "" }))
  }))
]

const run = (sessionsDir: string, paths: ReadonlyArray<string>, format: "cursor" | "auto" = "cursor") =>
  importSessions({ sessionsDir, format, paths }).pipe(Effect.provide(storeLayer))

const copyFixture = (dir: string): string => {
  const db = path.join(dir, "state.vscdb")
  fs.copyFileSync(fixture, db)
  return db
}

const log = (sessions: string, id: string) =>
  fs.readFileSync(sessionPaths(sessions, `cursor-ide-${id}`).events, "base64")

describe("Importer on a real Cursor 0.4x workspace state.vscdb (chats in ItemTable)", () => {
  it.effect("every chat becomes cursor-ide-<id>: prompts, texts and times match the source; verify is clean; re-import is byte-identical", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
      const sessions = yield* tempDir("cursor-real")
      const src = yield* tempDir("cursor-real-src")
      const db = copyFixture(src)
      assert.strictEqual(chats.length, 31)
      const report = yield* run(sessions, [src])
      assert.deepStrictEqual(
        report.sources.map((s) => [s.path, s.status]).sort(),
        chats.map((c) => [`${db}#${c.id}`, "created"]).sort()
      )
      for (const chat of chats) {
        const session = `cursor-ide-${chat.id}`
        const events = eventsOf(sessions, session)
        const prompts = chat.bubbles.filter((b) => b.user && b.text.trim().length > 0)
        assert.deepStrictEqual(
          events.flatMap((e) => e.type === "turn.started" ? [e.context?.goal] : []),
          prompts.map((b) => b.text),
          session
        )
        assert.deepStrictEqual(
          items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []),
          chat.bubbles.filter((b) => !b.user && b.text.length > 0).map((b) => b.text),
          session
        )
        assert.deepStrictEqual(items(events).filter((i) => i.type === "command_execution"), [], session)
        const completed = events.find((e) => e.type === "thread.completed")
        assert.deepStrictEqual(completed?.type === "thread.completed" ? completed.usage.output_tokens : -1, 0)
        const manifest = JSON.parse(fs.readFileSync(sessionPaths(sessions, session).manifest, "utf8"))
        assert.strictEqual(Date.parse(manifest["created_at"]), chat.created, session)
        const verified = yield* verifySession(sessions, session).pipe(Effect.provide(storeLayer))
        assert.deepStrictEqual(verified.findings, [], session)
      }
      // The draft left in each tab's input box (an empty user bubble) is counted, not written.
      const skipped = report.sources.reduce((n, s) => n + (s.records_skipped["user bubble: no text"] ?? 0), 0)
      assert.strictEqual(skipped, chats.flatMap((c) => c.bubbles).filter((b) => b.user && b.text.trim() === "").length)
      const before = chats.map((c) => log(sessions, c.id))
      const again = yield* run(sessions, [db], "auto")
      assert.strictEqual(again.sessions_unchanged, chats.length, JSON.stringify(again.sources.slice(0, 2)))
      assert.deepStrictEqual(chats.map((c) => log(sessions, c.id)), before)
    }))

  it.effect("a chat tab that gained bubbles imports only them: the same log as importing it whole", () =>
    Effect.gen(function*() {
      const whole = yield* tempDir("cursor-real-whole")
      const half = yield* tempDir("cursor-real-half")
      const src = yield* tempDir("cursor-real-src")
      const db = copyFixture(src)
      const tab = tabs[0]
      assert.isDefined(tab)
      if (tab === undefined) return
      const full = JSON.stringify(itemValue(fixture, CHATS))
      const cut = itemValue(fixture, CHATS) as { tabs: Array<{ bubbles: Array<unknown> }> }
      const first = cut.tabs[0]
      if (first !== undefined) first.bubbles = first.bubbles.slice(0, 10)
      const write = (value: string) => {
        const w = new DatabaseSync(db)
        w.prepare("UPDATE ItemTable SET value = ? WHERE key = ?").run(value, CHATS)
        w.close()
      }
      // Cursor is still answering in the tab (its last send is within the idle window).
      yield* TestClock.setTime(tab.lastSendTime)
      write(JSON.stringify(cut))
      yield* run(half, [db])
      write(full)
      yield* TestClock.setTime(tab.lastSendTime + DEFAULT_IDLE_WINDOW_MS)
      const second = yield* run(half, [db])
      assert.strictEqual(second.sources.find((s) => s.path === `${db}#${tab.tabId}`)?.status, "updated")
      yield* run(whole, [db])
      assert.strictEqual(log(half, tab.tabId), log(whole, tab.tabId))
    }))
})
