/**
 * `logbook import` end to end (in-process): every real fixture imports with exit 0 and the
 * imported sessions pass `verify` and can be read with `show`, `turn` and `events`; a second
 * import is reported unchanged and leaves `events.jsonl` byte-identical; `--json` prints the
 * report; a missing path or a link fails with exit 1 after the other sources were imported; a
 * file of no known format, or one that yields no message, is named and makes the import exit 1
 * (unless `--allow-empty`); `--dry-run` reports without writing.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir } from "@logbook/testkit"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { buildVscdb } from "../../../../projections/test/import/support/cursorVscdb.ts"
import { buildOpenCodeDb, openCodeRows } from "../../../../projections/test/import/support/openCodeDb.ts"
import { logbook } from "../inProcess.ts"

const realdata = path.join(import.meta.dirname, "..", "..", "..", "..", "projections", "test", "fixtures", "realdata")
const codexDir = path.join(realdata, "codex-rollout")
const claudeDir = path.join(realdata, "claude-code")
const copilotFixture = path.join(realdata, "copilot-cli", "agent-sessions__subdir_v1__events.jsonl")
const cursorFixture = path.join(realdata, "cursor", "agent-sessions__large.jsonl")
const aiderFixture = path.join(realdata, "aider", "zen-mcp-server", ".aider.chat.history.md")
const geminiFixture = path.join(realdata, "gemini-cli", "agentcmd__session-2025-10-27T19-55-981c87cb.json")
const clineFixture = path.join(realdata, "..", "handwritten", "cline-tasks", "1760000000000")

const eventsFiles = (sessionsDir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of fs.readdirSync(sessionsDir).sort()) {
    const file = path.join(sessionsDir, name, "events.jsonl")
    if (fs.existsSync(file)) out[name] = fs.readFileSync(file, "base64")
  }
  return out
}

interface Report {
  readonly sessions_created: number
  readonly sessions_unchanged: number
  readonly sources: ReadonlyArray<{ readonly session: string; readonly status: string }>
}

/** Polls `done` (up to a minute, for a busy machine) until a watcher has caught up. */
const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 600 && !done(); i++) yield* Effect.sleep("100 millis")
    assert.isTrue(done(), "the watcher did not catch up")
  })

describe("logbook import", () => {
  it.effect(
    "imports every real Codex and Claude fixture; show, turn, events and verify work on each session",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-cli")
        const codex = yield* logbook(["--sessions-dir", dir, "import", "codex", codexDir])
        assert.strictEqual(codex.exitCode, 0, codex.stderr)
        assert.include(codex.stdout, "2 created")
        const claude = yield* logbook(["--sessions-dir", dir, "import", "claude", claudeDir, "--json"])
        assert.strictEqual(claude.exitCode, 0, claude.stderr)
        const report: Report = JSON.parse(claude.stdout)
        assert.strictEqual(report.sessions_created, 3)
        const sessions = fs.readdirSync(dir).sort()
        assert.strictEqual(sessions.length, 5)
        for (const session of sessions) {
          const verify = yield* logbook(["--sessions-dir", dir, "verify", session])
          assert.strictEqual(verify.exitCode, 0, `${session}: ${verify.stdout}${verify.stderr}`)
          const show = yield* logbook(["--sessions-dir", dir, "show", session])
          assert.strictEqual(show.exitCode, 0, show.stderr)
          const turn = yield* logbook(["--sessions-dir", dir, "turn", session, "1"])
          assert.strictEqual(turn.exitCode, 0, turn.stderr)
          const events = yield* logbook(["--sessions-dir", dir, "events", session])
          assert.strictEqual(events.exitCode, 0, events.stderr)
          assert.include(events.stdout, "agent_message")
        }
      }),
    120_000
  )

  it.effect(
    "import auto takes every other real fixture with exit 0, verify clean on each session, and the same again unchanged",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-cli")
        yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
        const dirs = [
          "claude-code-project",
          "claude-code-checks",
          "gemini-cli",
          "codex-exec-json",
          "copilot-cli",
          "cursor"
        ]
          .map((d) => path.join(realdata, d))
        const first = yield* logbook(["--sessions-dir", dir, "import", "auto", ...dirs])
        assert.strictEqual(first.exitCode, 0, `${first.stdout}${first.stderr}`)
        // The Claude Code 2.1.39 project: a Bash result Claude Code moved to tool-results/ is read back.
        assert.include(first.stdout, "1 separated tool result read back")
        for (const session of fs.readdirSync(dir).sort()) {
          const verify = yield* logbook(["--sessions-dir", dir, "verify", session])
          assert.strictEqual(verify.exitCode, 0, `${session}: ${verify.stdout}${verify.stderr}`)
        }
        const before = eventsFiles(dir)
        const again = yield* logbook(["--sessions-dir", dir, "import", "auto", ...dirs, "--json"])
        assert.strictEqual(again.exitCode, 0, again.stderr)
        const report: Report = JSON.parse(again.stdout)
        assert.strictEqual(report.sessions_created, 0)
        assert.strictEqual(report.sessions_unchanged, Object.keys(before).length)
        assert.deepStrictEqual(eventsFiles(dir), before)
      }),
    120_000
  )

  it.effect(
    "import cursor takes the real Cursor 0.4x workspace state.vscdb (chats in ItemTable) with exit 0, verify clean on each chat, and auto finds it unchanged",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-cli")
        const src = yield* tempDir("import-cli-cursor-ide")
        fs.copyFileSync(
          path.join(realdata, "cursor-ide", "cursor-history", "state.vscdb"),
          path.join(src, "state.vscdb")
        )
        yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
        const first = yield* logbook(["--sessions-dir", dir, "import", "cursor", src])
        assert.strictEqual(first.exitCode, 0, `${first.stdout}${first.stderr}`)
        assert.include(first.stdout, "31 created")
        const sessions = fs.readdirSync(dir).filter((name) => name.startsWith("cursor-ide-")).sort()
        assert.strictEqual(sessions.length, 31)
        for (const session of sessions) {
          const verify = yield* logbook(["--sessions-dir", dir, "verify", session])
          assert.strictEqual(verify.exitCode, 0, `${session}: ${verify.stdout}${verify.stderr}`)
        }
        const before = eventsFiles(dir)
        const again = yield* logbook(["--sessions-dir", dir, "import", "auto", src, "--json"])
        assert.strictEqual(again.exitCode, 0, again.stderr)
        const report: Report = JSON.parse(again.stdout)
        assert.strictEqual(report.sessions_unchanged, 31)
        assert.deepStrictEqual(eventsFiles(dir), before)
      }),
    120_000
  )

  it.effect(
    "import cursor and import all without PATH take the workspace databases that hold chats and pass over those that hold none",
    () =>
      Effect.gen(function*() {
        const home = yield* tempDir("import-home")
        const storage = path.join(home, ".config", "Cursor", "User", "workspaceStorage")
        for (const name of ["a1", "b2", "c3"]) fs.mkdirSync(path.join(storage, name), { recursive: true })
        fs.copyFileSync(
          path.join(realdata, "cursor-ide", "cursor-history", "state.vscdb"),
          path.join(storage, "a1", "state.vscdb")
        )
        // A workspace Cursor opened but never chatted in: VS Code's ItemTable without Cursor's keys.
        const { DatabaseSync } = yield* Effect.promise(() => import("node:sqlite"))
        const empty = new DatabaseSync(path.join(storage, "b2", "state.vscdb"))
        empty.exec("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        empty.prepare("INSERT INTO ItemTable VALUES (?, ?)").run("workbench.explorer.treeViewState", "{}")
        empty.close()
        yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
        const dir = yield* tempDir("import-cli")
        const env = { HOME: home, CODEX_HOME: path.join(home, "no-codex"), XDG_DATA_HOME: "" }
        const run = yield* logbook(["--sessions-dir", dir, "import", "cursor"], { env })
        assert.strictEqual(run.exitCode, 0, `${run.stdout}${run.stderr}`)
        assert.include(run.stdout, "31 created")
        assert.notInclude(run.stdout, path.join(storage, "b2"))
        assert.strictEqual(fs.readdirSync(dir).filter((name) => name.startsWith("cursor-ide-")).length, 31)
        const all = yield* logbook(["--sessions-dir", dir, "import", "all"], { env })
        assert.strictEqual(all.exitCode, 0, all.stderr)
        assert.include(
          all.stdout,
          `Cursor: 31 sessions from 1 database in ${
            path.join(storage, "a1", "state.vscdb")
          }: 0 created, 0 updated, 31 unchanged`
        )
        assert.notInclude(all.stdout, path.join(storage, "b2"))
      }),
    120_000
  )

  it.effect(
    "import opencode takes the real OpenCode 1.15.7 session, joined into the export document, with exit 0 and verify clean",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-cli")
        const src = yield* tempDir("import-cli-opencode")
        const real = path.join(realdata, "opencode", "opencode-export-html__t8v6Igr8")
        const info = JSON.parse(fs.readFileSync(path.join(real, "session.json"), "utf8"))
        const messages = JSON.parse(fs.readFileSync(path.join(real, "messages.json"), "utf8"))
        const file = path.join(src, `${info.id}.json`)
        fs.writeFileSync(file, JSON.stringify({ info, messages }, null, 2))
        yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
        const run = yield* logbook(["--sessions-dir", dir, "import", "opencode", file])
        assert.strictEqual(run.exitCode, 0, `${run.stdout}${run.stderr}`)
        assert.include(run.stdout, "1 created")
        const verify = yield* logbook(["--sessions-dir", dir, "verify", `opencode-${info.id}`])
        assert.strictEqual(verify.exitCode, 0, `${verify.stdout}${verify.stderr}`)
      }),
    120_000
  )

  it.effect(
    "an import derives each session's memory view, so facts, search and explain work on the imported sessions",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-cli")
        // Years after the fixtures were written: they are finished, and older than any age limit.
        yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
        const imported = yield* logbook(["--sessions-dir", dir, "import", "claude", claudeDir])
        assert.strictEqual(imported.exitCode, 0, imported.stderr)
        assert.include(imported.stdout, "3 memory views derived")
        for (const session of fs.readdirSync(dir)) {
          const view = JSON.parse(fs.readFileSync(path.join(dir, session, "derived", "memory.json"), "utf8"))
          assert.strictEqual(view.origin, "derived", session)
          assert.isAbove(view.grounded_facts.length, 0, session)
        }
        const facts = yield* logbook(["--sessions-dir", dir, "facts", "--limit", "50"])
        assert.strictEqual(facts.exitCode, 0, facts.stderr)
        assert.include(facts.stdout, "hooks_claudecode_handlers.go")
        const search = yield* logbook(["--sessions-dir", dir, "search", "repository", "--in", "history", "--json"])
        assert.strictEqual(search.exitCode, 0, search.stderr)
        assert.include(search.stdout, "claude-198393f2-22db-477b-ac77-1825bea883ae")
        const explain = yield* logbook([
          "--sessions-dir",
          dir,
          "explain",
          "claude-198393f2-22db-477b-ac77-1825bea883ae"
        ])
        assert.strictEqual(explain.exitCode, 0, explain.stderr)
        assert.include(explain.stdout, "## Goal")
        const again = yield* logbook(["--sessions-dir", dir, "import", "claude", claudeDir])
        assert.strictEqual(again.exitCode, 0, again.stderr)
        assert.notInclude(again.stdout, "memory views derived")
      }),
    120_000
  )

  it.effect("a second import of the same sources is unchanged and byte-identical", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("import-cli")
      const first = yield* logbook(["--sessions-dir", dir, "import", "auto", codexDir, claudeDir])
      assert.strictEqual(first.exitCode, 0, first.stderr)
      const before = eventsFiles(dir)
      const again = yield* logbook(["--sessions-dir", dir, "import", "auto", codexDir, claudeDir, "--json"])
      assert.strictEqual(again.exitCode, 0, again.stderr)
      const report: Report = JSON.parse(again.stdout)
      assert.strictEqual(report.sessions_unchanged, 5)
      assert.deepStrictEqual(eventsFiles(dir), before)
    }), 120_000)

  it.effect(
    "a missing path and a symbolic link fail with exit 1 after the other sources were imported",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-cli")
        const links = yield* tempDir("import-links")
        const link = path.join(links, "linked.jsonl")
        fs.symlinkSync(path.join(claudeDir, fs.readdirSync(claudeDir)[0] ?? ""), link)
        const run = yield* logbook([
          "--sessions-dir",
          dir,
          "import",
          "claude",
          path.join(links, "missing"),
          link,
          claudeDir
        ])
        assert.strictEqual(run.exitCode, 1)
        assert.include(run.stderr, "2 sources could not be imported")
        assert.include(run.stderr, "symbolic link")
        assert.strictEqual(fs.readdirSync(dir).length, 3)
      }),
    120_000
  )

  it.effect("codex without a path reads $CODEX_HOME/sessions and archived_sessions", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("import-cli")
      const codexHome = yield* tempDir("codex-home")
      const day = path.join(codexHome, "sessions", "2025", "09", "25")
      fs.mkdirSync(day, { recursive: true })
      fs.mkdirSync(path.join(codexHome, "archived_sessions"))
      const [live, archived] = fs.readdirSync(codexDir).sort()
      fs.copyFileSync(path.join(codexDir, live ?? ""), path.join(day, live ?? ""))
      fs.copyFileSync(path.join(codexDir, archived ?? ""), path.join(codexHome, "archived_sessions", archived ?? ""))
      const run = yield* logbook(["--sessions-dir", dir, "import", "codex"], { env: { CODEX_HOME: codexHome } })
      assert.strictEqual(run.exitCode, 0, run.stderr)
      assert.include(run.stdout, "2 created")
    }), 120_000)

  it.effect(
    "exec reads codex exec --json lines from stdin (comment lines ignored) and is idempotent",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-cli")
        const execDir = path.join(realdata, "codex-exec-json")
        const file = fs.readdirSync(execDir).find((name) => name.includes("COMMENT")) ?? ""
        const input = fs.readFileSync(path.join(execDir, file), "utf8")
        const first = yield* logbook(["--sessions-dir", dir, "import", "exec", "-"], { input })
        assert.strictEqual(first.exitCode, 0, first.stderr)
        assert.include(first.stdout, "1 created")
        const [session] = fs.readdirSync(dir)
        const verify = yield* logbook(["--sessions-dir", dir, "verify", session ?? ""])
        assert.strictEqual(verify.exitCode, 0, verify.stdout)
        const again = yield* logbook(["--sessions-dir", dir, "import", "exec"], { input })
        assert.strictEqual(again.exitCode, 0, again.stderr)
        assert.include(again.stdout, "1 unchanged")
      }),
    120_000
  )

  it.live(
    "--watch imports what a growing rollout gains, waiting for a half-written line to be finished",
    () =>
      Effect.gen(function*() {
        const file = path.join(codexDir, fs.readdirSync(codexDir).sort()[0] ?? "")
        const bytes = fs.readFileSync(file)
        const whole = yield* tempDir("import-cli")
        const once = yield* logbook(["--sessions-dir", whole, "import", "codex", file])
        assert.strictEqual(once.exitCode, 0, once.stderr)
        const dir = yield* tempDir("import-cli")
        const src = yield* tempDir("import-watch")
        const live = path.join(src, path.basename(file))
        const cut = Math.floor(bytes.length / 2)
        fs.writeFileSync(live, bytes.subarray(0, cut))
        const watcher = yield* Effect.forkChild(
          logbook(["--sessions-dir", dir, "import", "codex", src, "--watch", "--interval", "1"])
        )
        const [session] = fs.readdirSync(whole)
        const imported = () => fs.existsSync(path.join(dir, session ?? "", "derived", "import.json"))
        yield* until(imported)
        fs.appendFileSync(live, bytes.subarray(cut))
        // The source then goes idle (its time is the fixture's, long past): the watcher finishes it
        // as the one-shot import of the fixture did.
        const { atime, mtime } = fs.statSync(file)
        fs.utimesSync(live, atime, mtime)
        const expected = fs.readFileSync(path.join(whole, session ?? "", "events.jsonl"), "base64")
        const current = () => {
          const events = path.join(dir, session ?? "", "events.jsonl")
          return fs.existsSync(events) && fs.readFileSync(events, "base64") === expected
        }
        yield* until(current)
        yield* Fiber.interrupt(watcher)
      }),
    120_000
  )

  // The sources that grow by appending, each laid out as its agent writes it.
  const growing: ReadonlyArray<{ readonly format: string; readonly fixture: string; readonly at: string }> = [
    {
      format: "copilot",
      fixture: copilotFixture,
      at: path.join("aaaabbbb-1111-2222-3333-ccccddddeeee", "events.jsonl")
    },
    { format: "cursor", fixture: cursorFixture, at: path.join("agent-transcripts", "0a1b2c3d.jsonl") },
    { format: "aider", fixture: aiderFixture, at: ".aider.chat.history.md" }
  ]
  for (const { at, fixture, format } of growing) {
    it.live(
      `--watch follows a growing ${format} source cut in the middle to the log one import of the finished whole writes`,
      () =>
        Effect.gen(function*() {
          const bytes = fs.readFileSync(fixture)
          const dir = yield* tempDir("import-cli")
          const src = yield* tempDir("import-watch")
          const live = path.join(src, at)
          fs.mkdirSync(path.dirname(live), { recursive: true })
          // Cut inside a line: the watcher must wait for the rest of it.
          const cut = bytes.indexOf(10, Math.floor(bytes.length / 2)) - 3
          fs.writeFileSync(live, bytes.subarray(0, cut))
          const watcher = yield* Effect.forkChild(
            logbook(["--sessions-dir", dir, "import", format, src, "--watch", "--interval", "1"])
          )
          const sessions = () => fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => !n.startsWith(".")) : []
          yield* until(() =>
            sessions().length > 0 && fs.existsSync(path.join(dir, sessions()[0] ?? "", "derived", "import.json"))
          )
          fs.appendFileSync(live, bytes.subarray(cut))
          // The fixture's own times are long past: once whole, the source is finished.
          const { atime, mtime } = fs.statSync(fixture)
          fs.utimesSync(live, atime, mtime)
          const whole = yield* tempDir("import-cli")
          const once = yield* logbook(["--sessions-dir", whole, "import", format, src])
          assert.strictEqual(once.exitCode, 0, once.stderr)
          const expected = fs.readdirSync(whole).filter((n) => !n.startsWith(".")).map((n) =>
            [n, fs.readFileSync(path.join(whole, n, "events.jsonl"), "base64")] as const
          )
          assert.isAbove(expected.length, 0)
          const same = () =>
            expected.every(([n, log]) => {
              const events = path.join(dir, n, "events.jsonl")
              return fs.existsSync(events) && fs.readFileSync(events, "base64") === log
            })
          yield* until(same)
          yield* Fiber.interrupt(watcher)
        }),
      120_000
    )
  }

  it.effect(
    "exec and Gemini fixtures import with exit 0 and their sessions verify clean",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-cli")
        const run = yield* logbook([
          "--sessions-dir",
          dir,
          "import",
          "auto",
          path.join(realdata, "codex-exec-json"),
          path.join(realdata, "gemini-cli")
        ])
        assert.strictEqual(run.exitCode, 0, run.stderr)
        const sessions = fs.readdirSync(dir)
        assert.strictEqual(sessions.length, 9)
        for (const session of sessions) {
          const verify = yield* logbook(["--sessions-dir", dir, "verify", session])
          assert.strictEqual(verify.exitCode, 0, `${session}: ${verify.stdout}`)
        }
      }),
    120_000
  )
  it.effect("a file of no known format makes import auto exit 1 naming it and why; --allow-empty accepts it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("import-cli")
      const src = yield* tempDir("import-src")
      fs.copyFileSync(path.join(claudeDir, fs.readdirSync(claudeDir).sort()[0] ?? ""), path.join(src, "a.jsonl"))
      fs.writeFileSync(path.join(src, "notes.jsonl"), "{\"kind\":\"todo\",\"text\":\"buy milk\"}\n")
      const strict = yield* logbook(["--sessions-dir", dir, "import", "auto", src])
      assert.strictEqual(strict.exitCode, 1)
      assert.include(strict.stdout, "1 file ignored:")
      assert.include(strict.stdout, `${path.join(src, "notes.jsonl")}: not a session file of a known format`)
      assert.include(strict.stderr, "notes.jsonl")
      assert.include(strict.stderr, "--allow-empty")
      assert.strictEqual(fs.readdirSync(dir).length, 1, "the recognised file was imported all the same")
      const lenient = yield* logbook(["--sessions-dir", dir, "import", "auto", src, "--allow-empty"])
      assert.strictEqual(lenient.exitCode, 0, lenient.stderr)
    }))

  it.effect("a source that yields no message is a warning naming it, and exit 1", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("import-cli")
      const src = yield* tempDir("import-src")
      // Hand-written: a rollout whose records are all of types this importer does not know.
      const file = path.join(src, "rollout-2026-09-01T10-00-00-0199aaaa-0000-7000-8000-000000000026.jsonl")
      fs.writeFileSync(
        file,
        [
          {
            timestamp: "2026-09-01T10:00:00.000Z",
            type: "session_meta",
            payload: { id: "0199aaaa-0000-7000-8000-000000000026", cli_version: "9.9.9" }
          },
          { timestamp: "2026-09-01T10:00:01.000Z", type: "event_msg", payload: { type: "future_prompt", text: "hi" } },
          { timestamp: "2026-09-01T10:00:02.000Z", type: "future_record", payload: {} }
        ].map((r) => JSON.stringify(r)).join("\n") + "\n"
      )
      const run = yield* logbook(["--sessions-dir", dir, "import", "codex", file, "--json"])
      assert.strictEqual(run.exitCode, 1)
      const report = JSON.parse(run.stdout)
      assert.strictEqual(report.sources_empty, 1)
      assert.include(report.warnings[0], file)
      const source = report.sources[0]
      assert.strictEqual(source.records_read, 3)
      assert.strictEqual(source.records_mapped, 1)
      assert.deepStrictEqual(source.records_skipped, { "event_msg/future_prompt": 1, future_record: 1 })
      assert.strictEqual(source.format_version, "9.9.9")
      assert.include(run.stderr, "gave nothing")
    }))

  it.effect("--dry-run prints the report of what would be imported and writes nothing", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("import-cli")
      const dry = yield* logbook(["--sessions-dir", dir, "import", "claude", claudeDir, "--dry-run"])
      assert.strictEqual(dry.exitCode, 0, dry.stderr)
      assert.include(dry.stdout, "Dry run (nothing written): would import 3 sources")
      assert.include(dry.stdout, "3 created")
      assert.deepStrictEqual(fs.existsSync(dir) ? fs.readdirSync(dir) : [], [])
      const real = yield* logbook(["--sessions-dir", dir, "import", "claude", claudeDir, "--json"])
      const dryJson = yield* logbook([
        "--sessions-dir",
        yield* tempDir("import-cli"),
        "import",
        "claude",
        claudeDir,
        "--json",
        "--dry-run"
      ])
      const counts = (text: string) => {
        const r = JSON.parse(text)
        return { events: r.events_written, records: r.records_read, skipped: r.records_skipped }
      }
      assert.deepStrictEqual(counts(dryJson.stdout), counts(real.stdout))
    }))
  it.effect(
    "import all finds every agent's default locations below HOME and CODEX_HOME (one of each agent laid out), says per agent what it found, and imports",
    () =>
      Effect.gen(function*() {
        const home = yield* tempDir("import-home")
        const codexHome = yield* tempDir("import-codex-home")
        const sessions = path.join(codexHome, "sessions", "2025", "09", "25")
        fs.mkdirSync(sessions, { recursive: true })
        for (const name of fs.readdirSync(codexDir)) {
          fs.copyFileSync(path.join(codexDir, name), path.join(sessions, name))
        }
        const project = path.join(home, ".claude", "projects", "-work-demo")
        fs.mkdirSync(project, { recursive: true })
        for (const name of fs.readdirSync(claudeDir)) {
          fs.copyFileSync(path.join(claudeDir, name), path.join(project, name))
        }
        const copilot = path.join(home, ".copilot", "session-state", "aaaabbbb-1111-2222-3333-ccccddddeeee")
        fs.mkdirSync(copilot, { recursive: true })
        fs.copyFileSync(copilotFixture, path.join(copilot, "events.jsonl"))
        const clineTasks = path.join(
          home,
          ".config",
          "Code",
          "User",
          "globalStorage",
          "saoudrizwan.claude-dev",
          "tasks"
        )
        fs.mkdirSync(path.join(clineTasks, "1760000000000"), { recursive: true })
        for (const name of fs.readdirSync(clineFixture)) {
          fs.copyFileSync(path.join(clineFixture, name), path.join(clineTasks, "1760000000000", name))
        }
        const geminiChats = path.join(home, ".gemini", "tmp", "9f2c4e1d", "chats")
        fs.mkdirSync(geminiChats, { recursive: true })
        fs.copyFileSync(geminiFixture, path.join(geminiChats, "session-2025-10-27T19-55-981c87cb.json"))
        // Roo Code is a fork of Cline and keeps the same task files below its own extension id.
        const rooTasks = path.join(
          home,
          ".config",
          "Code",
          "User",
          "globalStorage",
          "rooveterinaryinc.roo-cline",
          "tasks"
        )
        fs.mkdirSync(path.join(rooTasks, "1760000500000"), { recursive: true })
        for (const name of fs.readdirSync(clineFixture)) {
          fs.copyFileSync(path.join(clineFixture, name), path.join(rooTasks, "1760000500000", name))
        }
        const cursor = path.join(home, ".cursor", "projects", "Users-me-demo", "agent-transcripts")
        fs.mkdirSync(cursor, { recursive: true })
        fs.copyFileSync(cursorFixture, path.join(cursor, "0a1b2c3d.jsonl"))
        const opencode = path.join(home, ".local", "share", "opencode")
        fs.mkdirSync(opencode, { recursive: true })
        buildOpenCodeDb(path.join(opencode, "opencode.db"), openCodeRows)
        const cursorIde = path.join(home, ".config", "Cursor", "User", "globalStorage")
        fs.mkdirSync(cursorIde, { recursive: true })
        buildVscdb(path.join(cursorIde, "state.vscdb"))
        const dir = yield* tempDir("import-cli")
        const env = { HOME: home, CODEX_HOME: codexHome, XDG_DATA_HOME: "" }
        const dry = yield* logbook(["--sessions-dir", dir, "import", "all", "--dry-run"], { env })
        assert.strictEqual(dry.exitCode, 0, dry.stderr)
        assert.deepStrictEqual(fs.existsSync(dir) ? fs.readdirSync(dir) : [], [])
        const run = yield* logbook(["--sessions-dir", dir, "import", "all"], { env })
        assert.strictEqual(run.exitCode, 0, run.stderr)
        assert.include(run.stdout, `Codex CLI: 2 files in ${path.join(codexHome, "sessions")}: 2 created`)
        assert.include(run.stdout, `Claude Code: 3 files in ${path.join(home, ".claude", "projects")}: 3 created`)
        assert.include(run.stdout, `Gemini CLI: 1 file in ${path.join(home, ".gemini", "tmp")}: 1 created`)
        assert.include(
          run.stdout,
          `GitHub Copilot CLI: 1 file in ${path.join(home, ".copilot", "session-state")}: 1 created`
        )
        assert.include(run.stdout, `Cline: 3 files in ${clineTasks}: 1 created`)
        assert.include(run.stdout, `Roo Code: 3 files in ${rooTasks}: 1 created`)
        assert.include(
          run.stdout,
          `Cursor: 1 file and 2 sessions from 1 database in ${path.join(home, ".cursor", "projects")}, ${
            path.join(cursorIde, "state.vscdb")
          }: 3 created`
        )
        assert.include(
          run.stdout,
          `OpenCode: 2 sessions from 1 database in ${path.join(opencode, "opencode.db")}: 2 created`
        )
        assert.strictEqual(fs.readdirSync(dir).length, 14)
        const json = yield* logbook(["--sessions-dir", dir, "import", "all", "--json"], { env })
        const report = JSON.parse(json.stdout)
        assert.deepStrictEqual(
          report.agents.map((a: { sources: number }) => a.sources),
          [2, 3, 1, 1, 3, 3, 3, 2]
        )
        assert.strictEqual(report.sessions_unchanged, 14)
        // `import` without a subcommand is `import all`.
        const bare = yield* logbook(["--sessions-dir", dir, "import"], { env })
        assert.strictEqual(bare.exitCode, 0, bare.stderr)
        assert.include(bare.stdout, "Codex CLI: 2 files")
        assert.include(bare.stdout, "14 unchanged")
      }),
    120_000
  )
  it.effect(
    "retention run never removes imported sessions unless --include-imported; sessions lists their turns",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-cli")
        // Years after the fixtures were written: they are finished, and older than any age limit.
        yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
        const imported = yield* logbook(["--sessions-dir", dir, "import", "claude", claudeDir])
        assert.strictEqual(imported.exitCode, 0, imported.stderr)
        const sessions = yield* logbook(["--sessions-dir", dir, "sessions", "--json"])
        const listed: Array<{ turn_count: number; status: string }> = JSON.parse(sessions.stdout)
        assert.strictEqual(listed.length, 3)
        for (const s of listed) assert.strictEqual(s.status, "completed")
        assert.deepStrictEqual(listed.map((s) => s.turn_count).sort(), [1, 2, 4])
        const policy = ["--max-sessions", "0", "--max-age-days", "1"]
        const kept = yield* logbook(["--sessions-dir", dir, "retention", "run", ...policy])
        assert.strictEqual(kept.exitCode, 0, kept.stderr)
        assert.include(kept.stdout, "Removed nothing.")
        assert.strictEqual(fs.readdirSync(dir).filter((n) => !n.startsWith(".")).length, 3)
        const asked = yield* logbook(["--sessions-dir", dir, "retention", "run", ...policy, "--include-imported"])
        assert.strictEqual(asked.exitCode, 0, asked.stderr)
        assert.include(asked.stdout, "Removed 3 session(s)")
      }),
    120_000
  )
})
