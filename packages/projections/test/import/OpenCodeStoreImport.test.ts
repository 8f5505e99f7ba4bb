/**
 * The OpenCode importer on OpenCode's own stores: a SQLite database the test builds from the
 * hand-written rows in `test/fixtures/handwritten/opencode/opencode-db.rows.json` (the
 * `ses_0hw1` export laid out as OpenCode's `session` / `message` / `part` rows, plus a subagent
 * session with a part row that is not JSON), and the legacy `storage/` tree of the same session
 * (PROVENANCE.md there). Both give exactly the events the export gives; the per-fixture checks,
 * re-import, incremental = whole, `--dry-run`, and a locked, corrupt or foreign database.
 */
import { assert, describe, it } from "@effect/vitest"
import { SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as child from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { DEFAULT_IDLE_WINDOW_MS, importSessions } from "../../src/import/Importer.ts"
import { verifySession } from "../../src/session/Verification.ts"
import type { Rows } from "./support/openCodeDb.ts"
import { buildOpenCodeDb as buildDb, openCodeRows as rows } from "./support/openCodeDb.ts"
import { eventsOf, items } from "./support/sessionEvents.ts"

const fixtures = path.join(import.meta.dirname, "..", "fixtures", "handwritten", "opencode")
const exportFile = path.join(fixtures, "ses_0hw1.export.json")
const storageDir = path.join(fixtures, "storage")
const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

const FINISHED_AT = 1_760_000_025_000 + DEFAULT_IDLE_WINDOW_MS

const run = (sessionsDir: string, format: "opencode" | "auto", paths: ReadonlyArray<string>, dryRun = false) =>
  importSessions({ sessionsDir, format, paths, dryRun }).pipe(Effect.provide(storeLayer))

const logOf = (sessionsDir: string, session: string) =>
  fs.readFileSync(sessionPaths(sessionsDir, session).events, "base64")

interface ExportDoc {
  readonly info: { readonly time: { readonly created: number } }
  readonly messages: ReadonlyArray<{
    readonly info: { readonly role: string; readonly time: { readonly created: number } }
    readonly parts: ReadonlyArray<
      { readonly type: string; readonly text?: string; readonly tokens?: { output: number; reasoning: number } }
    >
  }>
}
const doc: ExportDoc = JSON.parse(fs.readFileSync(exportFile, "utf8"))

/** The events the export itself gives (the reference both stores must match byte for byte). */
const exportedLog = Effect.gen(function*() {
  const sessions = yield* tempDir("opencode-export")
  const src = yield* tempDir("opencode-export-src")
  fs.copyFileSync(exportFile, path.join(src, "s.json"))
  fs.utimesSync(path.join(src, "s.json"), 1_700_000_000, 1_700_000_000)
  const report = yield* run(sessions, "opencode", [src])
  assert.strictEqual(report.sessions_created, 1, JSON.stringify(report.sources))
  return logOf(sessions, "opencode-ses_0hw1")
})

describe("Importer on OpenCode's database and storage tree", () => {
  it.effect("a database imports each session as the export does: prompts, texts, commands, tokens, times", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(FINISHED_AT)
      const reference = yield* exportedLog
      const sessions = yield* tempDir("opencode-db")
      const data = yield* tempDir("opencode-data")
      const db = path.join(data, "opencode.db")
      buildDb(db, rows)
      const report = yield* run(sessions, "opencode", [data])
      const byPath = Object.fromEntries(report.sources.map((s) => [s.path, s]))
      assert.deepStrictEqual(Object.keys(byPath).sort(), [`${db}#ses_0hw1`, `${db}#ses_0hw2`])
      assert.strictEqual(byPath[`${db}#ses_0hw1`]?.status, "created")
      assert.strictEqual(logOf(sessions, "opencode-ses_0hw1"), reference)
      const events = eventsOf(sessions, "opencode-ses_0hw1")
      const prompts = doc.messages.filter((m) => m.info.role === "user")
      assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts.length)
      const texts = doc.messages.flatMap((m) =>
        m.info.role === "assistant" ? m.parts.filter((p) => p.type === "text").map((p) => p.text ?? "") : []
      )
      assert.deepStrictEqual(items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []), texts)
      assert.deepStrictEqual(
        items(events).flatMap((i) => i.type === "command_execution" ? [[i.command, i.exit_code]] : []),
        [["npm test", 1], ["npm test", 0]]
      )
      const sourceOutput = doc.messages.flatMap((m) => m.parts).filter((p) => p.type === "step-finish").reduce(
        (n, p) => n + (p.tokens?.output ?? 0) + (p.tokens?.reasoning ?? 0),
        0
      )
      const completed = events.find((e) => e.type === "thread.completed")
      assert.strictEqual(completed?.type === "thread.completed" ? completed.usage.output_tokens : -1, sourceOutput)
      const manifest = JSON.parse(fs.readFileSync(sessionPaths(sessions, "opencode-ses_0hw1").manifest, "utf8"))
      assert.strictEqual(Date.parse(manifest["created_at"]), doc.info.time.created)
      const verified = yield* verifySession(sessions, "opencode-ses_0hw1").pipe(Effect.provide(storeLayer))
      assert.deepStrictEqual(verified.findings, [])

      // The subagent session: its parent named, the row that is not JSON reported with its row id.
      const sub = byPath[`${db}#ses_0hw2`]
      assert.strictEqual(sub?.status, "created")
      assert.strictEqual(sub?.parent_session, "opencode-ses_0hw1")
      assert.strictEqual(sub?.lines_skipped_count, 1)
      const badRow = rows.part.findIndex((p) => p.data_text !== undefined) + 1
      assert.strictEqual(sub?.lines_skipped[0]?.line, badRow)
      assert.match(sub?.lines_skipped[0]?.reason ?? "", /^part prt_102_1 of message msg_102: not JSON/)
      const subItems = items(eventsOf(sessions, "opencode-ses_0hw2"))
      assert.deepStrictEqual(subItems.flatMap((i) => i.type === "agent_message" ? [i.text] : []), [
        "Only src/sum.ts uses it."
      ])
      assert.deepStrictEqual(subItems.flatMap((i) => i.type === "command_execution" ? [i.command] : []), [
        "grep -rn sum src"
      ])

      // Re-import: nothing written, the logs byte-identical; `import auto` recognises the database.
      const before = logOf(sessions, "opencode-ses_0hw2")
      const again = yield* run(sessions, "auto", [db])
      assert.strictEqual(again.sessions_unchanged, 2, JSON.stringify(again.sources))
      assert.strictEqual(again.events_written, 0)
      assert.strictEqual(logOf(sessions, "opencode-ses_0hw1"), reference)
      assert.strictEqual(logOf(sessions, "opencode-ses_0hw2"), before)
    }))

  it.effect("a live session is imported up to its last finished message, and incremental equals whole", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(FINISHED_AT)
      const reference = yield* exportedLog
      const sessions = yield* tempDir("opencode-db-live")
      const data = yield* tempDir("opencode-data-live")
      const db = path.join(data, "opencode.db")
      // As the database stood while msg_003 was still streaming: not completed, two of its parts written.
      const live: Rows = {
        session: rows.session.filter((s) => s.id === "ses_0hw1").map((s) => ({
          ...s,
          time_updated: 1_760_000_003_200
        })),
        message: rows.message.filter((m) => m.id <= "msg_003").map((m) =>
          m.id === "msg_003" && typeof m.data === "object" && m.data !== null
            ? { ...m, data: { ...m.data, time: { created: 1_760_000_003_000 } } }
            : m
        ),
        part: rows.part.filter((p) => (p.message_id ?? "") < "msg_003" || p.id <= "prt_003_1")
      }
      buildDb(db, live)
      yield* TestClock.setTime(1_760_000_003_300)
      const first = yield* run(sessions, "opencode", [db])
      assert.strictEqual(first.sessions_created, 1, JSON.stringify(first.sources))
      const partial = eventsOf(sessions, "opencode-ses_0hw1")
      assert.strictEqual(partial.some((e) => e.type === "thread.completed"), false)
      assert.strictEqual(items(partial).some((i) => i.type === "file_change"), false)
      fs.rmSync(data, { recursive: true })
      fs.mkdirSync(data)
      buildDb(db, { ...rows, session: rows.session.filter((s) => s.id === "ses_0hw1") })
      yield* TestClock.setTime(FINISHED_AT)
      const second = yield* run(sessions, "opencode", [db])
      assert.strictEqual(second.sessions_updated, 1, JSON.stringify(second.sources))
      assert.strictEqual(logOf(sessions, "opencode-ses_0hw1"), reference)
    }))

  it.effect("the legacy storage/ tree imports as the export does; beside an opencode.db it is left to the database", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(FINISHED_AT)
      const reference = yield* exportedLog
      const sessions = yield* tempDir("opencode-storage")
      const data = yield* tempDir("opencode-data-storage")
      fs.cpSync(storageDir, path.join(data, "storage"), { recursive: true })
      const report = yield* run(sessions, "opencode", [data])
      assert.deepStrictEqual(
        report.sources.map((s) => [s.path, s.status]),
        [[`${path.join(data, "storage")}#ses_0hw1`, "created"]]
      )
      assert.strictEqual(logOf(sessions, "opencode-ses_0hw1"), reference)
      const again = yield* run(sessions, "auto", [path.join(data, "storage")])
      assert.strictEqual(again.sessions_unchanged, 1, JSON.stringify(again.sources))

      buildDb(path.join(data, "opencode.db"), rows)
      const both = yield* run(sessions, "opencode", [data])
      const storage = both.sources.find((s) => s.path === path.join(data, "storage"))
      assert.strictEqual(storage?.status, "ignored")
      assert.strictEqual(both.sources_empty, 0)
      assert.strictEqual(both.sources_failed, 0, JSON.stringify(both.sources))
    }))

  it.effect("a storage/ file that is not JSON is reported by its path; the rest of the session is imported", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(FINISHED_AT)
      const sessions = yield* tempDir("opencode-storage-bad")
      const data = yield* tempDir("opencode-data-storage-bad")
      const storage = path.join(data, "storage")
      fs.cpSync(storageDir, storage, { recursive: true })
      // A part replaced mid-write: cut off inside a string.
      const broken = path.join(storage, "part", "msg_005", "prt_005_1.json")
      fs.writeFileSync(broken, fs.readFileSync(broken, "utf8").slice(0, 40))
      const report = yield* run(sessions, "opencode", [storage])
      const source = report.sources[0]
      assert.strictEqual(source?.status, "created", JSON.stringify(report.sources))
      assert.strictEqual(source?.lines_skipped_count, 1)
      assert.include(source?.lines_skipped[0]?.reason ?? "", `${broken}: not JSON`)
      const prompts = doc.messages.filter((m) => m.info.role === "user").length
      const events = eventsOf(sessions, "opencode-ses_0hw1")
      assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts)
    }))

  it.effect("--dry-run maps a database and a storage tree and writes nothing", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(FINISHED_AT)
      const sessions = yield* tempDir("opencode-dry")
      const data = yield* tempDir("opencode-data-dry")
      buildDb(path.join(data, "opencode.db"), rows)
      const tree = yield* tempDir("opencode-tree-dry")
      fs.cpSync(storageDir, path.join(tree, "storage"), { recursive: true })
      const report = yield* run(sessions, "opencode", [data, tree], true)
      assert.strictEqual(report.sources.length, 3)
      assert.strictEqual(report.sources.every((s) => s.dry_run && s.events_written > 0), true)
      assert.deepStrictEqual(fs.readdirSync(sessions), [])
    }))

  it.effect("a locked, a half-written and a foreign database fail alone; the other sources are imported", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(FINISHED_AT)
      const sessions = yield* tempDir("opencode-bad")
      const data = yield* tempDir("opencode-data-bad")
      const half = path.join(data, "half.db")
      buildDb(path.join(data, "whole.db"), rows, "delete")
      fs.writeFileSync(half, fs.readFileSync(path.join(data, "whole.db")).subarray(0, 3000))
      fs.rmSync(path.join(data, "whole.db"))
      const foreign = new DatabaseSync(path.join(data, "other.db"))
      foreign.exec("CREATE TABLE t (a)")
      foreign.close()
      const locked = path.join(data, "locked.db")
      buildDb(locked, rows, "delete")
      const wal = path.join(data, "wal.db")
      buildDb(wal, rows, "wal")
      // Another process holds a write transaction on both: EXCLUSIVE on the rollback-journal one.
      const holder = child.spawn(process.execPath, [
        "-e",
        `const { DatabaseSync } = require("node:sqlite")
         const a = new DatabaseSync(${JSON.stringify(locked)}); a.exec("BEGIN EXCLUSIVE"); a.exec("DELETE FROM part")
         const b = new DatabaseSync(${JSON.stringify(wal)}); b.exec("BEGIN IMMEDIATE"); b.exec("DELETE FROM part")
         process.stdout.write("holding\\n"); setTimeout(() => {}, 60000)`
      ], { stdio: ["ignore", "pipe", "inherit"] })
      yield* Effect.addFinalizer(() => Effect.sync(() => holder.kill()))
      yield* Effect.callback<void>((resume) => {
        holder.stdout.once("data", () => resume(Effect.void))
      })
      const report = yield* run(sessions, "opencode", [data])
      const status = Object.fromEntries(report.sources.map((s) => [path.basename(s.path), [s.status, s.reason ?? ""]]))
      assert.strictEqual(status["half.db"]?.[0], "failed")
      assert.match(status["half.db"]?.[1] ?? "", /half\.db: .*(malformed|not a database)/)
      assert.strictEqual(status["locked.db"]?.[0], "failed")
      assert.match(status["locked.db"]?.[1] ?? "", /locked\.db: database is locked \(another process is writing it/)
      assert.deepStrictEqual(status["other.db"], [
        "failed",
        "not an OpenCode database (expected session, message and part tables)"
      ])
      // The WAL database, after the failed ones, is read under the writer, from its last commit.
      assert.strictEqual(status["wal.db#ses_0hw1"]?.[0], "created")
      assert.strictEqual(status["wal.db#ses_0hw2"]?.[0], "created")
      assert.strictEqual(items(eventsOf(sessions, "opencode-ses_0hw1")).some((i) => i.type === "file_change"), true)
    }))
})
