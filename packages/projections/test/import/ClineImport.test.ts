/**
 * The Cline / Roo Code importer on the hand-written task in `test/fixtures/handwritten/cline-tasks`
 * (PROVENANCE.md there; no permissively licensed real task was found): turns equal prompts, texts,
 * the command with its whole output, edits, tokens equal the source's own, source timestamps,
 * `verify` clean, re-import byte-identical, a task that gained messages imports only them; and a
 * task file replaced by garbage mid-way fails as its own source while the others import.
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

const task = path.join(import.meta.dirname, "..", "fixtures", "handwritten", "cline-tasks", "1760000000000")
const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

type Rec = Record<string, unknown>
const ui: Array<Rec> = JSON.parse(fs.readFileSync(path.join(task, "ui_messages.json"), "utf8"))

const logBytes = (dir: string, session: string) => fs.readFileSync(sessionPaths(dir, session).events, "base64")

const run = (sessionsDir: string, format: "cline" | "roo" | "auto", paths: ReadonlyArray<string>) =>
  importSessions({ sessionsDir, format, paths }).pipe(Effect.provide(storeLayer))

/** A copy of the task directory below `root/tasks/<id>` (so the test may change it). */
const copyTask = (root: string, id = "1760000000000"): string => {
  const dir = path.join(root, "tasks", id)
  fs.mkdirSync(dir, { recursive: true })
  for (const name of fs.readdirSync(task)) fs.copyFileSync(path.join(task, name), path.join(dir, name))
  return dir
}

describe("Importer on a Cline task", () => {
  it.effect("prompts, texts, the command with its output, edits, tokens and times match the task; verify is clean", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("import-cline")
      const src = yield* tempDir("import-cline-src")
      const dir = copyTask(src)
      fs.utimesSync(path.join(dir, "ui_messages.json"), 1_700_000_000, 1_700_000_000)
      yield* TestClock.setTime(1_700_000_000_000 + DEFAULT_IDLE_WINDOW_MS)
      const report = yield* run(sessions, "cline", [src])
      assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
      assert.strictEqual(report.sessions_created, 1)
      const ignored = report.sources.filter((s) => s.status === "ignored").map((s) => path.basename(s.path)).sort()
      assert.deepStrictEqual(ignored, ["api_conversation_history.json", "task_metadata.json"])
      const source = report.sources.find((s) => s.status === "created")
      assert.strictEqual(source?.session, "cline-1760000000000")
      const events = eventsOf(sessions, "cline-1760000000000")
      const prompts = ui.filter((m) => m["say"] === "task" || m["say"] === "user_feedback")
      assert.deepStrictEqual(
        events.flatMap((e) => e.type === "turn.started" ? [e.context?.goal ?? ""] : []),
        prompts.map((m) => String(m["text"]))
      )
      const texts = items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : [])
      assert.deepStrictEqual(
        texts,
        ui.filter((m) => (m["say"] === "text" || m["say"] === "completion_result") && m["partial"] !== true).map((m) =>
          String(m["text"])
        )
      )
      const commands = items(events).flatMap((i) =>
        i.type === "command_execution" ? [[i.command, i.aggregated_output]] : []
      )
      assert.deepStrictEqual(commands, [["npm test", "FAIL src/sum.test.ts\nTests: 1 failed, 1 total"]])
      assert.deepStrictEqual(
        items(events).flatMap((i) => i.type === "file_change" ? i.changes.map((c) => `${c.kind} ${c.path}`) : []),
        ["update src/sum.ts", "add src/neg.test.ts"]
      )
      // The edit's SEARCH/REPLACE block becomes its diff; the new file's content every line added.
      assert.deepStrictEqual(
        items(events).flatMap((i) => i.type === "file_change" ? [i.unified_diff] : []),
        [
          "--- a/src/sum.ts\n+++ b/src/sum.ts\n@@\n-return a + b + 1\n+return a + b\n",
          "--- /dev/null\n+++ b/src/neg.test.ts\n@@ -0,0 +1,1 @@\n+test('neg', () => {})\n"
        ]
      )
      assert.strictEqual(items(events).filter((i) => i.type === "error").length, 1)
      const sourceOutput = ui.filter((m) => m["say"] === "api_req_started").reduce(
        (n, m) => n + Number(JSON.parse(String(m["text"]))["tokensOut"]),
        0
      )
      const turnOutput = events.reduce(
        (n, e) => n + (e.type === "turn.completed" ? (e.usage?.output_tokens ?? 0) : 0),
        0
      )
      assert.strictEqual(turnOutput, sourceOutput)
      const manifest = JSON.parse(fs.readFileSync(sessionPaths(sessions, "cline-1760000000000").manifest, "utf8"))
      assert.strictEqual(Date.parse(manifest["created_at"]), Number(ui[0]?.["ts"]))
      assert.strictEqual(Date.parse(manifest["updated_at"]), Number(ui[ui.length - 1]?.["ts"]))
      assert.strictEqual(manifest["status"], "completed")
      const verified = yield* verifySession(sessions, "cline-1760000000000").pipe(Effect.provide(storeLayer))
      assert.deepStrictEqual(verified.findings, [])
      const before = logBytes(sessions, "cline-1760000000000")
      const again = yield* run(sessions, "cline", [src])
      assert.strictEqual(again.sessions_unchanged, 1)
      assert.strictEqual(logBytes(sessions, "cline-1760000000000"), before)
    }))

  it.effect("a task that gained messages imports only them: the same log as importing it whole", () =>
    Effect.gen(function*() {
      const whole = yield* tempDir("import-cline-whole")
      const half = yield* tempDir("import-cline-half")
      const src = yield* tempDir("import-cline-src")
      const dir = copyTask(src)
      yield* run(whole, "cline", [src])
      const file = path.join(dir, "ui_messages.json")
      fs.writeFileSync(file, JSON.stringify(ui.slice(0, 9)))
      yield* run(half, "cline", [src])
      fs.writeFileSync(file, JSON.stringify(ui))
      const second = yield* run(half, "cline", [src])
      assert.strictEqual(second.sessions_updated, 1, JSON.stringify(second.sources))
      assert.strictEqual(logBytes(half, "cline-1760000000000"), logBytes(whole, "cline-1760000000000"))
    }))

  it.effect("Roo Code tasks become roo-<id>; garbage, a replaced file and a huge message never stop the others", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("import-roo")
      const src = yield* tempDir("import-roo-src")
      copyTask(src, "a")
      const garbage = copyTask(src, "b")
      fs.writeFileSync(path.join(garbage, "ui_messages.json"), Buffer.from([0x5b, 0xff, 0xfe, 0x7b]))
      const huge = copyTask(src, "c")
      fs.writeFileSync(
        path.join(huge, "ui_messages.json"),
        JSON.stringify([{ ts: 1, type: "say", say: "task", text: "x".repeat(3_000_000) }, {
          ts: 2,
          type: "say",
          say: "future_kind",
          text: ""
        }])
      )
      const report = yield* run(sessions, "roo", [src])
      const status = Object.fromEntries(
        report.sources.filter((s) => s.path.endsWith("ui_messages.json")).map((s) => [
          path.basename(path.dirname(s.path)),
          s.status
        ])
      )
      assert.deepStrictEqual(status, { a: "created", b: "failed", c: "created" })
      const c = report.sources.find((s) => s.session === "roo-c")
      assert.strictEqual(c?.records_skipped["say future_kind"], 1)
      assert.strictEqual(eventsOf(sessions, "roo-c").filter((e) => e.type === "turn.started").length, 1)
    }))
})
