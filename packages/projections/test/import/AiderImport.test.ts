/**
 * The Aider importer on a real chat history (`test/fixtures/realdata/aider`) and a hand-written one
 * (`test/fixtures/handwritten/aider-repo`; PROVENANCE.md beside each): turns equal `#### ` prompts,
 * texts, `/run` commands with their output, edits, tokens from `Tokens:` lines, run-header times,
 * re-import byte-identical, a history that grew imports only its new records, and invalid UTF-8
 * never stops an import.
 */
import { assert, describe, it } from "@effect/vitest"
import { aiderRecords } from "@logbook/domain"
import { SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { DEFAULT_IDLE_WINDOW_MS, importSessions } from "../../src/import/Importer.ts"
import { verifySession } from "../../src/session/Verification.ts"
import { eventsOf, items } from "./support/sessionEvents.ts"

const fixtures = path.join(import.meta.dirname, "..", "fixtures")
const real = path.join(fixtures, "realdata", "aider", "zen-mcp-server", ".aider.chat.history.md")
const written = path.join(fixtures, "handwritten", "aider-repo", ".aider.chat.history.md")
const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

const run = (sessionsDir: string, paths: ReadonlyArray<string>) =>
  importSessions({ sessionsDir, format: "aider", paths }).pipe(Effect.provide(storeLayer))

/** A copy of a history in a fresh repository directory, idle (finished) for the import. */
const copyIdle = (file: string, repo: string) =>
  Effect.gen(function*() {
    fs.mkdirSync(repo, { recursive: true })
    const copy = path.join(repo, ".aider.chat.history.md")
    fs.copyFileSync(file, copy)
    fs.utimesSync(copy, 1_700_000_000, 1_700_000_000)
    yield* TestClock.setTime(1_700_000_000_000 + DEFAULT_IDLE_WINDOW_MS)
    return copy
  })

describe("Importer on Aider chat histories", () => {
  for (const file of [real, written]) {
    it.effect(`${path.basename(path.dirname(file))}: prompts, texts, times and tokens match the history; verify clean`, () =>
      Effect.gen(function*() {
        const sessions = yield* tempDir("import-aider")
        const src = yield* tempDir("import-aider-src")
        const copy = yield* copyIdle(file, path.join(src, "repo"))
        const report = yield* run(sessions, [src])
        assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
        const source = report.sources[0]
        assert.strictEqual(source?.format, "aider")
        const session = source?.session ?? ""
        assert.match(session, /^aider-[0-9a-f]{16}$/u)
        const text = fs.readFileSync(copy, "utf8")
        const lines = text.split("\n")
        // A prompt is a block of `#### ` lines: count the lines that start one.
        const prompts = lines.filter((l, i) => l.startsWith("####") && !(lines[i - 1] ?? "").startsWith("####"))
        const events = eventsOf(sessions, session)
        assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts.length)
        const runs = [...text.matchAll(/^# aider chat started at (\S+) (\S+)/gmu)].map((m) => `${m[1]}T${m[2]}Z`)
        const manifest = JSON.parse(fs.readFileSync(sessionPaths(sessions, session).manifest, "utf8"))
        assert.strictEqual(Date.parse(manifest["created_at"]), Date.parse(runs[0] ?? ""))
        assert.strictEqual(Date.parse(manifest["updated_at"]), Date.parse(runs[runs.length - 1] ?? ""))
        const sourceOutput = [...text.matchAll(/^> Tokens: .*?, ([\d.]+)(k?) received/gmu)].reduce(
          (n, m) => n + Number(m[1]) * (m[2] === "k" ? 1000 : 1),
          0
        )
        const completed = events.find((e) => e.type === "thread.completed")
        assert.strictEqual(completed?.type === "thread.completed" ? completed.usage.output_tokens : -1, sourceOutput)
        const verified = yield* verifySession(sessions, session).pipe(Effect.provide(storeLayer))
        assert.deepStrictEqual(verified.findings, [])
        const before = fs.readFileSync(sessionPaths(sessions, session).events, "base64")
        const again = yield* run(sessions, [src])
        assert.strictEqual(again.sessions_unchanged, 1)
        assert.strictEqual(fs.readFileSync(sessionPaths(sessions, session).events, "base64"), before)
      }))
  }

  it.effect("the hand-written history's commands, edits and texts are where the mapping says", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("import-aider")
      const src = yield* tempDir("import-aider-src")
      yield* copyIdle(written, path.join(src, "repo"))
      const report = yield* run(sessions, [src])
      const all = items(eventsOf(sessions, report.sources[0]?.session ?? ""))
      assert.deepStrictEqual(
        all.flatMap((i) => i.type === "command_execution" ? [[i.command, i.aggregated_output]] : []),
        [[
          "python -m pytest -q",
          "1 passed in 0.01s\nAdd 0.1k tokens of command output to the chat? (Y)es/(N)o [Yes]: n"
        ]]
      )
      assert.deepStrictEqual(
        all.flatMap((i) => i.type === "file_change" ? i.changes.map((c) => c.path) : []),
        ["sum.py", "test_sum.py"]
      )
      assert.deepStrictEqual(
        all.flatMap((i) => i.type === "agent_message" ? [i.text.split("\n")[0]] : []),
        ["The bug is in `sum`: it adds one too many.", "Added `test_negative`."]
      )
    }))

  it.effect("a history that grew imports only its new records: the same log as importing it whole", () =>
    Effect.gen(function*() {
      const whole = yield* tempDir("import-aider-whole")
      const half = yield* tempDir("import-aider-half")
      const src = yield* tempDir("import-aider-src")
      const copy = yield* copyIdle(written, path.join(src, "repo"))
      yield* run(whole, [src])
      const text = fs.readFileSync(written, "utf8")
      const cut = text.indexOf("# aider chat started at 2026-03-02")
      fs.writeFileSync(copy, text.slice(0, cut))
      // Live (modified just now): its last record may still grow, so it waits.
      const now = 1_700_000_000 + DEFAULT_IDLE_WINDOW_MS / 1000
      fs.utimesSync(copy, now, now)
      yield* run(half, [src])
      fs.writeFileSync(copy, text)
      fs.utimesSync(copy, 1_700_000_000, 1_700_000_000)
      const second = yield* run(half, [src])
      assert.strictEqual(second.sources_failed, 0, JSON.stringify(second.sources))
      const session = second.sources[0]?.session ?? ""
      assert.strictEqual(
        fs.readFileSync(sessionPaths(half, session).events, "base64"),
        fs.readFileSync(sessionPaths(whole, session).events, "base64")
      )
    }))

  it.effect("invalid UTF-8 and a huge prompt are read, not fatal; the reader is total on any text", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("import-aider")
      const src = yield* tempDir("import-aider-src")
      const repo = path.join(src, "repo")
      fs.mkdirSync(repo)
      const file = path.join(repo, ".aider.chat.history.md")
      fs.writeFileSync(
        file,
        Buffer.concat([
          Buffer.from("# aider chat started at 2026-01-01 00:00:00\n\n#### " + "y".repeat(2_000_000) + "\n\n"),
          Buffer.from([0xff, 0xfe, 0x0a]),
          Buffer.from("#### second\n")
        ])
      )
      fs.utimesSync(file, 1_700_000_000, 1_700_000_000)
      yield* TestClock.setTime(1_700_000_000_000 + DEFAULT_IDLE_WINDOW_MS)
      const report = yield* run(sessions, [src])
      assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
      const events = eventsOf(sessions, report.sources[0]?.session ?? "")
      assert.strictEqual(events.filter((e) => e.type === "turn.started").length, 2)
      assert.deepStrictEqual(aiderRecords(""), [])
      assert.deepStrictEqual(aiderRecords("####\n>\n").map((r) => r.aider), ["prompt", "output"])
    }))
})
