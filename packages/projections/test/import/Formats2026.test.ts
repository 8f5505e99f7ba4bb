/**
 * The formats of 2026 and the legacy ones, on the files in `test/fixtures/handwritten` (hand-written
 * where no public real file was found, see PROVENANCE.md there): the legacy Codex rollout (bare
 * header and items, JSONL and `.json` array), Codex ≥ 0.147 (`item_completed` UserMessage /
 * AgentMessage, encrypted-only reasoning, `base_instructions`), `codex exec --json` without
 * `thread.started`, a Claude Code project with a subagent directory, and Gemini CLI JSONL with
 * repeated messages, `$set` checkpoints and `$rewindTo`. Each is imported finished: turns, texts,
 * commands, tokens and times are checked against what the file says, re-importing changes nothing,
 * and a live half then the finished whole equals the finished whole.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { mulberry32, tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { DEFAULT_IDLE_WINDOW_MS, importSessions } from "../../src/import/Importer.ts"
import { verifySession } from "../../src/session/Verification.ts"
import { eventsOf, logBytes } from "./support/sessionEvents.ts"

const dir = path.join(import.meta.dirname, "..", "fixtures", "handwritten")
const fixture = (prefix: string): string => {
  const name = fs.readdirSync(dir).find((n) => n.startsWith(prefix))
  if (name === undefined) throw new Error(`no fixture ${prefix}`)
  return path.join(dir, name)
}

const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

const run = (sessionsDir: string, format: "auto" | "codex" | "exec" | "gemini" | "claude", paths: Array<string>) =>
  importSessions({ sessionsDir, format, paths }).pipe(Effect.provide(storeLayer))

const idleAfter = (file: string) => TestClock.setTime(fs.statSync(file).mtimeMs + DEFAULT_IDLE_WINDOW_MS)

const manifestOf = (sessionsDir: string, session: string): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(sessionPaths(sessionsDir, session).manifest, "utf8"))

/** What a session says: prompts, texts, commands, output tokens per turn, how turns ended. */
const figures = (events: ReadonlyArray<ThreadEvent>) => {
  const items = events.flatMap((e) => e.type === "item.completed" ? [e.item] : [])
  return {
    goals: events.flatMap((e) => e.type === "turn.started" ? [e.context?.goal ?? ""] : []),
    texts: items.flatMap((i) => i.type === "agent_message" ? [i.text] : []),
    commands: items.flatMap((i) => i.type === "command_execution" ? [i.command] : []),
    ends: events.flatMap((e) => e.type === "turn.completed" || e.type === "turn.failed" ? [e.type] : []),
    output: events.flatMap((e) =>
      e.type === "turn.completed" || e.type === "turn.failed" ? [e.usage?.output_tokens ?? 0] : []
    ),
    completed: events.filter((e) => e.type === "thread.completed").length
  }
}

const sameInstant = (a: unknown, b: string): boolean => typeof a === "string" && Date.parse(a) === Date.parse(b)

/** Imports `file` finished and checks the session, `verify`, and that re-importing changes nothing. */
const importFinished = (file: string, format: "auto" | "codex" | "exec" | "gemini" = "auto") =>
  Effect.gen(function*() {
    const sessions = yield* tempDir("import-2026")
    yield* idleAfter(file)
    const report = yield* run(sessions, format, [file])
    assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
    assert.strictEqual(report.sources_empty, 0, JSON.stringify(report.sources))
    const source = report.sources[0]
    const session = source?.session ?? ""
    const verified = yield* verifySession(sessions, session).pipe(Effect.provide(storeLayer))
    assert.deepStrictEqual(verified.findings, [])
    const before = logBytes(sessions)
    const again = yield* run(sessions, format, [file])
    assert.strictEqual(again.sessions_unchanged, 1)
    assert.deepStrictEqual(logBytes(sessions), before)
    return { sessions, session, source, events: eventsOf(sessions, session), manifest: manifestOf(sessions, session) }
  })

describe("Legacy Codex rollouts", () => {
  const expected = {
    goals: ["list the files and count them", "thanks"],
    texts: ["There are 3 files.", "You're welcome."],
    commands: ["ls | wc -l"],
    ends: ["turn.completed", "turn.completed"],
    output: [0, 0],
    completed: 1
  }

  it.effect("the JSONL form (bare header, state markers, bare items) imports its prompts, texts and command", () =>
    Effect.gen(function*() {
      const file = fixture("codex-legacy__")
      const r = yield* importFinished(file, "codex")
      assert.strictEqual(r.session, "codex-5f0c3a1e-7b2d-4c8e-9a41-2b6d8e0f1a37")
      assert.deepStrictEqual(figures(r.events), expected)
      assert.strictEqual(r.manifest["status"], "completed")
      assert.strictEqual(r.manifest["turn_count"], 2)
      // No per-item times: the header's is the session's.
      assert.isTrue(sameInstant(r.manifest["created_at"], "2025-08-20T13:20:47.060Z"))
      assert.isTrue(sameInstant(r.manifest["updated_at"], "2025-08-20T13:20:47.060Z"))
      assert.deepStrictEqual(r.source?.records_skipped, {
        "legacy state marker": 2,
        "message (user): injected context (legacy)": 1
      })
    }))

  it.effect("the .json array form imports the same conversation", () =>
    Effect.gen(function*() {
      const r = yield* importFinished(fixture("codex-legacy-array__"), "codex")
      assert.strictEqual(r.session, "codex-6a1d4b2f-8c3e-4d9f-ab52-3c7e9f1a2b48")
      assert.deepStrictEqual(figures(r.events), expected)
      assert.strictEqual(r.manifest["status"], "completed")
    }))

  it.effect("auto recognises both forms", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("import-2026")
      const report = yield* run(sessions, "auto", [fixture("codex-legacy__"), fixture("codex-legacy-array__")])
      assert.deepStrictEqual(report.sources.map((s) => s.format), ["codex", "codex"])
      assert.strictEqual(report.sessions_created, 2)
    }))
})

describe("Codex 0.147 rollouts", () => {
  it.effect("item_completed UserMessage opens the turns, AgentMessage is the text, usage by deltas of totals", () =>
    Effect.gen(function*() {
      const r = yield* importFinished(fixture("codex-0.147__"), "codex")
      assert.deepStrictEqual(figures(r.events), {
        goals: ["How do I fix this bug?", "And the tests?"],
        texts: ["Check the null case in parse().", "Add a case for an empty input."],
        commands: [],
        ends: ["turn.completed", "turn.completed"],
        output: [80, 50],
        completed: 1
      })
      assert.strictEqual(r.source?.format_version, "0.147.0")
      assert.strictEqual(r.source?.records_skipped["response_item/reasoning: no summary (encrypted only)"], 1)
      assert.strictEqual(r.source?.records_skipped["item_completed/Reasoning: duplicates a response_item"], 1)
      assert.strictEqual(r.source?.records_skipped["world_state"], 1)
      assert.isTrue(sameInstant(r.manifest["updated_at"], "2026-08-18T02:45:04.200Z"))
      assert.isTrue(sameInstant(r.manifest["created_at"], "2026-08-18T02:44:22.900Z"))
      assert.deepStrictEqual(r.events.flatMap((e) => e.type === "turn.started" ? [e.context?.turn_id] : []), [
        "t-1",
        "t-2"
      ])
    }))

  it.effect("a rollout that writes both user_message and item_completed UserMessage counts each prompt once", () =>
    Effect.gen(function*() {
      const src = yield* tempDir("import-src")
      const lines = fs.readFileSync(fixture("codex-0.147__"), "utf8").split("\n").filter((l) => l.length > 0)
      const both = lines.flatMap((line) => {
        const r = JSON.parse(line)
        const item = r.payload?.item
        return item?.type === "UserMessage"
          ? [
            line,
            JSON.stringify({
              timestamp: r.timestamp,
              type: "event_msg",
              payload: { type: "user_message", message: item.content[0].text }
            })
          ]
          : [line]
      })
      const file = path.join(src, path.basename(fixture("codex-0.147__")))
      fs.writeFileSync(file, both.join("\n") + "\n")
      const r = yield* importFinished(file, "codex")
      assert.deepStrictEqual(figures(r.events).goals, ["How do I fix this bug?", "And the tests?"])
      assert.strictEqual(r.source?.records_skipped["event_msg/user_message: duplicates item_completed UserMessage"], 2)
    }))
})

describe("codex exec --json without thread.started", () => {
  it.effect("gets a session id from its path and content, the same on every import", () =>
    Effect.gen(function*() {
      const file = fixture("exec-cut-at-front__")
      const r = yield* importFinished(file, "exec")
      assert.match(r.session, /^codex-exec-[0-9a-f]{32}$/u)
      assert.deepStrictEqual(figures(r.events).commands, ["bash -lc ls"])
      assert.strictEqual(figures(r.events).goals.length, 1)
      assert.strictEqual(r.manifest["status"], "completed")
      const other = yield* tempDir("import-2026")
      const again = yield* run(other, "exec", [file])
      assert.strictEqual(again.sources[0]?.session, r.session)
      const src = yield* tempDir("import-src")
      const moved = path.join(src, "elsewhere.jsonl")
      fs.copyFileSync(file, moved)
      const elsewhere = yield* run(other, "exec", [moved])
      assert.notStrictEqual(elsewhere.sources[0]?.session, r.session)
    }))
})

describe("Claude Code subagent directories", () => {
  it.effect("a project walk imports the subagent as its own session naming its parent; .meta.json is a companion", () =>
    Effect.gen(function*() {
      const project = path.join(dir, "claude-project")
      const sessions = yield* tempDir("import-2026")
      yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
      const report = yield* run(sessions, "auto", [project])
      assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
      assert.strictEqual(report.sources_empty, 0, JSON.stringify(report.sources))
      const byName = new Map(report.sources.map((s) => [path.basename(s.path), s]))
      assert.strictEqual(byName.get("agent-a1b2c3d.meta.json")?.status, "ignored")
      assert.include(byName.get("agent-a1b2c3d.meta.json")?.reason ?? "", "companion file")
      const parent = "claude-3d4e5f60-7182-4394-a5b6-c7d8e9f0a1b2"
      const child = `${parent}-agent-a1b2c3d`
      assert.strictEqual(byName.get("agent-a1b2c3d.jsonl")?.session, child)
      assert.strictEqual(byName.get("agent-a1b2c3d.jsonl")?.parent_session, parent)
      const main = figures(eventsOf(sessions, parent))
      assert.deepStrictEqual(main.goals, ["review the parser with a subagent"])
      assert.deepStrictEqual(main.output, [55])
      const sub = figures(eventsOf(sessions, child))
      assert.deepStrictEqual(sub.goals, ["Review src/parse.ts"])
      assert.deepStrictEqual(sub.texts, ["The parser misses the empty case."])
      // One API response over two lines: counted once, the last line's usage.
      assert.deepStrictEqual(sub.output, [33])
      const contexts = eventsOf(sessions, child).flatMap((e) => e.type === "turn.started" ? [e.context] : [])
      assert.strictEqual(contexts[0]?.parent_actor_id, parent)
      assert.strictEqual(manifestOf(sessions, child)["status"], "completed")
    }))

  it.effect("sidechain records inside a main transcript are counted, not made into its turns", () =>
    Effect.gen(function*() {
      const src = yield* tempDir("import-src")
      const project = path.join(dir, "claude-project")
      const main = fs.readFileSync(path.join(project, "3d4e5f60-7182-4394-a5b6-c7d8e9f0a1b2.jsonl"), "utf8")
      const sub = fs.readFileSync(
        path.join(project, "3d4e5f60-7182-4394-a5b6-c7d8e9f0a1b2", "subagents", "agent-a1b2c3d.jsonl"),
        "utf8"
      ).split("\n").filter((l) => l.length > 0).map((l) => {
        const { agentId: _agentId, ...rest } = JSON.parse(l)
        return JSON.stringify(rest)
      })
      const lines = main.split("\n").filter((l) => l.length > 0)
      const inline = path.join(src, "3d4e5f60-7182-4394-a5b6-c7d8e9f0a1b2.jsonl")
      fs.writeFileSync(inline, [lines[0], lines[1], ...sub, ...lines.slice(2)].join("\n") + "\n")
      const r = yield* importFinished(inline, "auto")
      assert.deepStrictEqual(figures(r.events).goals, ["review the parser with a subagent"])
      assert.strictEqual(r.source?.records_skipped["sidechain user in the main transcript (a subagent's)"], 1)
      assert.strictEqual(r.source?.records_skipped["sidechain assistant in the main transcript (a subagent's)"], 2)
    }))
})

describe("Gemini CLI JSONL", () => {
  it.effect("repeated messages write only what is new, a $set checkpoint adds its unseen messages, $rewindTo fails the turn", () =>
    Effect.gen(function*() {
      const r = yield* importFinished(fixture("gemini-jsonl__"), "gemini")
      assert.deepStrictEqual(figures(r.events), {
        goals: ["run the tests", "oops, wrong prompt", "summarise the test run"],
        texts: ["Running them.", "Sure, deleting everything.", "2 tests passed."],
        commands: ["npm test"],
        ends: ["turn.completed", "turn.failed", "turn.completed"],
        output: [25, 7, 6],
        completed: 1
      })
      const failed = r.events.find((e) => e.type === "turn.failed")
      assert.include(failed?.type === "turn.failed" ? failed.message : "", "rewound in Gemini CLI to message m3")
      assert.isTrue(sameInstant(r.manifest["created_at"], "2026-09-16T09:00:00.000Z"))
      assert.isTrue(sameInstant(r.manifest["updated_at"], "2026-09-16T09:06:04.000Z"))
    }))
})

describe("Gemini CLI subagents", () => {
  it.effect("a session in chats/<parent id>/ is its own session naming gemini-<parent id> as its parent", () =>
    Effect.gen(function*() {
      const home = yield* tempDir("import-gemini")
      const parentId = "7c2e9d14-5a6b-4f3c-8d2e-1f0a9b8c7d6e"
      const chats = path.join(home, "tmp", "a1b2c3", "chats")
      fs.mkdirSync(path.join(chats, parentId), { recursive: true })
      const text = fs.readFileSync(fixture("gemini-jsonl__"), "utf8")
      fs.writeFileSync(path.join(chats, "session-2026-09-16T09-00-7c2e9d14.jsonl"), text)
      // The subagent: the same shape under its own session id (hand-made from the fixture).
      fs.writeFileSync(path.join(chats, parentId, "sub-1.jsonl"), text.replaceAll(parentId, "0a0b0c0d-sub1"))
      const sessions = yield* tempDir("import-2026")
      yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
      const report = yield* run(sessions, "gemini", [home])
      assert.strictEqual(report.sessions_created, 2, JSON.stringify(report.sources))
      const sub = report.sources.find((s) => s.path.endsWith("sub-1.jsonl"))
      assert.strictEqual(sub?.session, "gemini-0a0b0c0d-sub1")
      assert.strictEqual(sub?.parent_session, `gemini-${parentId}`)
      const main = report.sources.find((s) => !s.path.endsWith("sub-1.jsonl"))
      assert.strictEqual(main?.parent_session, undefined)
      const contexts = eventsOf(sessions, "gemini-0a0b0c0d-sub1").flatMap((e) =>
        e.type === "turn.started" ? [e.context?.parent_actor_id] : []
      )
      assert.deepStrictEqual(contexts, [`gemini-${parentId}`, `gemini-${parentId}`, `gemini-${parentId}`])
    }))
})

describe("Half then whole on the 2026 fixtures", () => {
  for (const prefix of ["codex-legacy__", "codex-0.147__", "gemini-jsonl__", "exec-cut-at-front__"]) {
    it.effect(
      `${prefix}: a live prefix, then the finished whole, equals the finished whole at once`,
      () =>
        Effect.gen(function*() {
          const bytes = fs.readFileSync(fixture(prefix))
          const src = yield* tempDir("import-src")
          const file = path.join(src, path.basename(fixture(prefix)))
          const format = prefix.startsWith("exec") ? "exec" : "auto"
          fs.writeFileSync(file, bytes)
          fs.utimesSync(file, 1_700_000_000, 1_700_000_000)
          const whole = yield* tempDir("import-whole")
          yield* idleAfter(file)
          yield* run(whole, format, [file])
          const expected = logBytes(whole)
          const prng = mulberry32(bytes.length)
          for (const cut of Array.from({ length: 5 }, () => Math.floor(prng.next() * bytes.length))) {
            const sessions = yield* tempDir("import-half")
            fs.writeFileSync(file, bytes.subarray(0, cut))
            fs.utimesSync(file, 1_700_000_000, 1_700_000_000)
            yield* TestClock.setTime(fs.statSync(file).mtimeMs + 1000)
            yield* run(sessions, format, [file])
            fs.writeFileSync(file, bytes)
            fs.utimesSync(file, 1_700_000_000, 1_700_000_000)
            yield* idleAfter(file)
            yield* run(sessions, format, [file])
            assert.deepStrictEqual(logBytes(sessions), expected, `cut at byte ${cut}`)
          }
        }),
      120_000
    )
  }
})
