/**
 * The importers on the real Codex rollouts and Claude Code transcripts checked into
 * `test/fixtures/realdata` (PROVENANCE.md there): every assistant text lands in an
 * `agent_message`, every shell command in a `command_execution`, turns equal prompts, output
 * tokens equal the source's own total, re-import is byte-identical, a half-then-whole import
 * equals a whole one (cuts anywhere, inside lines too), and a line holding two objects keeps both.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { claudeText, CODEX_SHELL_TOOLS, isClaudePrompt } from "@logbook/domain"
import { SessionFs, SessionRegistry } from "@logbook/store"
import { mulberry32, tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { importSessions } from "../../src/import/Importer.ts"
import { eventsOf } from "./support/sessionEvents.ts"

const fixtures = path.join(import.meta.dirname, "..", "fixtures", "realdata")
const filesIn = (dir: string): Array<string> =>
  fs.readdirSync(path.join(fixtures, dir)).sort().map((name) => path.join(fixtures, dir, name))
const codexFiles = filesIn("codex-rollout")
const claudeFiles = filesIn("claude-code")

const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

/** The parsed JSON records of a foreign JSONL file (test-side, independent of the importer). */
const recordsOf = (file: string): Array<Record<string, unknown>> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim().length > 0).map((l) => JSON.parse(l))

const items = (events: ReadonlyArray<ThreadEvent>) =>
  events.flatMap((e) => e.type === "item.completed" || e.type === "item.started" ? [e.item] : [])

const outputTokens = (events: ReadonlyArray<ThreadEvent>): number =>
  events.reduce(
    (n, e) => n + (e.type === "turn.completed" || e.type === "turn.failed" ? (e.usage?.output_tokens ?? 0) : 0),
    0
  )

const run = (sessionsDir: string, format: "codex" | "claude" | "gemini" | "auto", paths: ReadonlyArray<string>) =>
  importSessions({ sessionsDir, format, paths }).pipe(Effect.provide(storeLayer))

describe("Importer on real Codex rollouts", () => {
  for (const file of codexFiles) {
    it.effect(`${path.basename(file)} imports whole: texts, commands, prompts and tokens match the source`, () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import")
        const report = yield* run(dir, "codex", [file])
        assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
        assert.strictEqual(report.sessions_created, 1)
        const source = report.sources[0]
        assert.isDefined(source?.session)
        const events = eventsOf(dir, source?.session ?? "")
        const records = recordsOf(file)
        const payloads = records.map((r) => r["payload"] as Record<string, unknown>)
        const texts = payloads.filter((p) => p["type"] === "message" && p["role"] === "assistant").flatMap((p) =>
          (p["content"] as Array<Record<string, unknown>>).filter((c) => c["type"] === "output_text").map((c) =>
            c["text"]
          )
        )
        const messages = new Set(items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []))
        for (const text of texts) {
          assert.isTrue(messages.has(text as string), `missing agent_message ${String(text).slice(0, 60)}`)
        }
        const shellCalls = payloads.filter((p) =>
          p["type"] === "function_call" && CODEX_SHELL_TOOLS.has(p["name"] as string)
        )
        const started = items(events).filter((i) => i.type === "command_execution" && i.status === "in_progress")
        assert.strictEqual(started.length, shellCalls.length)
        const commandTexts = new Set(
          items(events).flatMap((i) => i.type === "command_execution" && i.status !== "in_progress" ? [i.command] : [])
        )
        for (const call of shellCalls.filter((c) => c["name"] === "shell")) {
          const argv = JSON.parse(call["arguments"] as string).command as Array<string>
          // `bash -lc <script>` is recorded as the script; other argv as the joined words.
          const expected = argv.length === 3 && argv[1] === "-lc" ? argv[2] : argv.join(" ")
          assert.isTrue(commandTexts.has(expected ?? ""), `missing command ${argv.join(" ")}`)
        }
        const prompts = payloads.filter((p) => p["type"] === "user_message").length
        assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts)
        const totals = payloads.filter((p) => p["type"] === "token_count" && p["info"] !== null).map((p) =>
          ((p["info"] as Record<string, Record<string, number>>)["total_token_usage"]?.["output_tokens"]) ?? 0
        )
        const sourceTotal = totals.length === 0 ? 0 : Math.max(...totals)
        assert.strictEqual(outputTokens(events) + (source?.open_turn_usage.output_tokens ?? 0), sourceTotal)
      }))
  }
})

describe("Importer on real Claude Code transcripts", () => {
  for (const file of claudeFiles) {
    it.effect(`${path.basename(file)} imports whole: texts, commands, prompts and tokens match the source`, () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import")
        const report = yield* run(dir, "claude", [file])
        assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
        const source = report.sources[0]
        const events = eventsOf(dir, source?.session ?? "")
        const records = recordsOf(file)
        const blocks = records.filter((r) => r["type"] === "assistant").flatMap((
          r
        ) => ((r["message"] as Record<string, unknown>)["content"] as Array<Record<string, unknown>>))
        const messages = new Set(items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []))
        for (const b of blocks.filter((b) => b["type"] === "text" && (b["text"] as string).length > 0)) {
          assert.isTrue(messages.has(b["text"] as string))
        }
        const commandTexts = new Set(items(events).flatMap((i) => i.type === "command_execution" ? [i.command] : []))
        for (const b of blocks.filter((b) => b["type"] === "tool_use" && b["name"] === "Bash")) {
          assert.isTrue(commandTexts.has((b["input"] as Record<string, string>)["command"] ?? ""))
        }
        const prompts = records.filter((r) => isClaudePrompt(r)).length
        assert.isAbove(prompts, 0)
        assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts)
        const goals = events.flatMap((e) => e.type === "turn.started" ? [e.context?.goal] : [])
        assert.deepStrictEqual(
          goals,
          records.filter((r) => isClaudePrompt(r)).map((r) =>
            claudeText((r["message"] as Record<string, unknown>)["content"])
          )
        )
        const perMessage = new Map<string, number>()
        for (const r of records.filter((r) => r["type"] === "assistant")) {
          const m = r["message"] as Record<string, unknown>
          perMessage.set(m["id"] as string, (m["usage"] as Record<string, number>)["output_tokens"] ?? 0)
        }
        const sourceTotal = [...perMessage.values()].reduce((a, b) => a + b, 0)
        assert.strictEqual(outputTokens(events) + (source?.open_turn_usage.output_tokens ?? 0), sourceTotal)
      }))
  }
})

describe("Importer on real codex exec --json output", () => {
  for (const file of filesIn("codex-exec-json")) {
    it.effect(`${path.basename(file)} imports: turns, messages, commands and tokens match the source`, () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import")
        const report = yield* run(dir, "auto", [file])
        assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
        const events = eventsOf(dir, report.sources[0]?.session ?? "")
        const records = fs.readFileSync(file, "utf8").split("\n").filter((l) =>
          l.trim().length > 0 && !l.startsWith("#")
        )
          .map((l) => JSON.parse(l) as Record<string, unknown>)
        assert.strictEqual(
          events.filter((e) => e.type === "turn.started").length,
          records.filter((r) => r["type"] === "turn.started").length
        )
        const completed = records.filter((r) => r["type"] === "item.completed").map((r) =>
          r["item"] as Record<string, unknown>
        )
        const messages = new Set(items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []))
        for (const m of completed.filter((i) => i["type"] === "agent_message")) {
          assert.isTrue(messages.has(m["text"] as string))
        }
        const commands = new Set(items(events).flatMap((i) => i.type === "command_execution" ? [i.command] : []))
        for (const c of completed.filter((i) => i["type"] === "command_execution")) {
          assert.isTrue(commands.has(c["command"] as string))
        }
        const sourceTokens = records.filter((r) => r["type"] === "turn.completed").reduce(
          (n, r) => n + ((r["usage"] as Record<string, number>)["output_tokens"] ?? 0),
          0
        )
        assert.strictEqual(outputTokens(events), sourceTokens)
      }))
  }
})

/** Imports `bytes` written at a fixed file name below `dir` (so successive imports see one growing source). */
const importBytes = (sessionsDir: string, dir: string, name: string, bytes: Uint8Array) =>
  Effect.gen(function*() {
    const file = path.join(dir, name)
    fs.writeFileSync(file, bytes)
    return yield* run(sessionsDir, "auto", [file])
  })

const logBytes = (sessionsDir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of fs.readdirSync(sessionsDir).sort()) {
    out[name] = fs.readFileSync(path.join(sessionsDir, name, "events.jsonl"), "base64")
  }
  return out
}

describe("Incremental import", () => {
  for (const file of [...codexFiles, ...claudeFiles]) {
    it.effect(
      `${path.basename(file)}: importing a prefix, then the whole file, writes exactly the whole import`,
      () =>
        Effect.gen(function*() {
          const bytes = fs.readFileSync(file)
          const whole = yield* tempDir("import-whole")
          const src = yield* tempDir("import-src")
          yield* importBytes(whole, src, "whole.jsonl", bytes)
          const expected = logBytes(whole)
          const prng = mulberry32(bytes.length)
          // Cut points: random ones (most fall inside a line), a line end, and the very start.
          const firstNl = bytes.indexOf(10) + 1
          const cuts = [0, firstNl, ...Array.from({ length: 4 }, () => Math.floor(prng.next() * bytes.length))]
          for (const cut of cuts) {
            const sessions = yield* tempDir("import-half")
            yield* importBytes(sessions, src, "growing.jsonl", bytes.subarray(0, cut))
            const second = yield* importBytes(sessions, src, "growing.jsonl", bytes)
            assert.strictEqual(second.sources_failed, 0, `cut ${cut}: ${JSON.stringify(second.sources)}`)
            assert.deepStrictEqual(logBytes(sessions), expected, `cut at byte ${cut}`)
            const third = yield* importBytes(sessions, src, "growing.jsonl", bytes)
            assert.strictEqual(third.sessions_unchanged, 1)
          }
        }),
      120_000
    )
  }

  it.effect("a source whose imported part changed is refused and the session is left as it was", () =>
    Effect.gen(function*() {
      const file = claudeFiles[0] ?? ""
      const bytes = fs.readFileSync(file)
      const sessions = yield* tempDir("import")
      const src = yield* tempDir("import-src")
      yield* importBytes(sessions, src, "s.jsonl", bytes)
      const before = logBytes(sessions)
      const edited = Buffer.from(bytes)
      edited[10] = edited[10] === 65 ? 66 : 65
      const again = yield* importBytes(sessions, src, "s.jsonl", edited)
      assert.strictEqual(again.sources[0]?.status, "refused")
      assert.include(again.sources[0]?.reason ?? "", "changed")
      assert.deepStrictEqual(logBytes(sessions), before)
    }))
})

describe("Tolerance", () => {
  const tiny = claudeFiles.find((f) => f.includes("tiny")) ?? ""

  it.effect("two JSON objects on one line are split and both kept (the same events as on two lines)", () =>
    Effect.gen(function*() {
      const text = fs.readFileSync(tiny, "utf8")
      const lines = text.split("\n")
      const joined = [`${lines[0]}${lines[1]}`, ...lines.slice(2)].join("\n")
      const plain = yield* tempDir("import")
      const src = yield* tempDir("import-src")
      yield* importBytes(plain, src, "a.jsonl", Buffer.from(text))
      const concatenated = yield* tempDir("import")
      const report = yield* importBytes(concatenated, src, "b.jsonl", Buffer.from(joined))
      assert.strictEqual(report.sources[0]?.lines_split, 1)
      assert.strictEqual(report.records_read, lines.filter((l) => l.trim().length > 0).length)
      assert.deepStrictEqual(logBytes(concatenated), logBytes(plain))
    }))

  it.effect("CRLF endings, a garbage line and invalid UTF-8 keep every record; the bad line is reported by number", () =>
    Effect.gen(function*() {
      const text = fs.readFileSync(tiny, "utf8")
      const lines = text.split("\n")
      const crlf = [lines[0], "not json at all {", ...lines.slice(1)].join("\r\n")
      const bytes = Buffer.concat([Buffer.from(crlf), Buffer.from([0x0a, 0xff, 0xfe, 0x0a])])
      const plain = yield* tempDir("import")
      const src = yield* tempDir("import-src")
      yield* importBytes(plain, src, "a.jsonl", Buffer.from(text))
      const hostile = yield* tempDir("import")
      const report = yield* importBytes(hostile, src, "b.jsonl", bytes)
      const source = report.sources[0]
      assert.strictEqual(source?.lines_skipped_count, 2)
      assert.strictEqual(source?.lines_skipped[0]?.line, 2)
      assert.include(source?.lines_skipped[0]?.reason ?? "", "not JSON")
      assert.deepStrictEqual(logBytes(hostile), logBytes(plain))
    }))

  it.effect("a line over 1 MB is imported whole", () =>
    Effect.gen(function*() {
      const lines = fs.readFileSync(tiny, "utf8").split("\n").filter((l) => l.length > 0)
      const big = "x".repeat(3 * 1024 * 1024)
      const patched = lines.map((line) => {
        const record = JSON.parse(line)
        const block = record.type === "assistant" ? record.message.content[0] : undefined
        if (block?.type === "text") block.text = big
        return JSON.stringify(record)
      })
      assert.isTrue(patched.some((l) => l.length > 3 * 1024 * 1024))
      const sessions = yield* tempDir("import")
      const src = yield* tempDir("import-src")
      const report = yield* importBytes(sessions, src, "big.jsonl", Buffer.from(patched.join("\n")))
      const events = eventsOf(sessions, report.sources[0]?.session ?? "")
      assert.isTrue(items(events).some((i) => i.type === "agent_message" && i.text === big))
    }), 60_000)

  it.effect("a transcript with nothing to import (only summary records) makes no session", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("import")
      const src = yield* tempDir("import-src")
      const summary = fs.readFileSync(tiny, "utf8").split("\n")[0] ?? ""
      const report = yield* importBytes(
        sessions,
        src,
        "5a3bb1c8-c3ce-466e-b487-24212cbf1da1.jsonl",
        Buffer.from(`${summary}\n`)
      )
      assert.strictEqual(report.sources[0]?.status, "ignored")
      assert.strictEqual(report.sources[0]?.records_read, 1)
      assert.deepStrictEqual(fs.existsSync(sessions) ? fs.readdirSync(sessions) : [], [])
    }))

  it.effect("a Claude subagent transcript becomes its own session whose contexts name the parent session", () =>
    Effect.gen(function*() {
      const lines = fs.readFileSync(tiny, "utf8").split("\n").filter((l) => l.length > 0)
      const sidechain = lines.map((line) => {
        const record = JSON.parse(line)
        return JSON.stringify(
          typeof record.sessionId === "string" ? { ...record, isSidechain: true, agentId: "a937f53" } : record
        )
      })
      const sessions = yield* tempDir("import")
      const src = yield* tempDir("import-src")
      const report = yield* importBytes(sessions, src, "agent-a937f53.jsonl", Buffer.from(sidechain.join("\n")))
      const source = report.sources[0]
      assert.strictEqual(source?.session, "claude-5a3bb1c8-c3ce-466e-b487-24212cbf1da1-agent-a937f53")
      assert.strictEqual(source?.parent_session, "claude-5a3bb1c8-c3ce-466e-b487-24212cbf1da1")
      const events = eventsOf(sessions, source?.session ?? "")
      const started = events.find((e) => e.type === "turn.started")
      assert.strictEqual(
        started?.type === "turn.started" ? started.context?.parent_actor_id : undefined,
        source?.parent_session
      )
      for (const item of items(events)) assert.strictEqual(item.context?.parent_actor_id, source?.parent_session)
    }))

  it.effect("a file of no known format is ignored, not failed", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("import")
      const src = yield* tempDir("import-src")
      const report = yield* importBytes(sessions, src, "other.jsonl", Buffer.from("{\"hello\":1}\n"))
      assert.strictEqual(report.sources[0]?.status, "ignored")
      assert.strictEqual(report.sources_failed, 0)
    }))
})

describe("Importer on Gemini CLI sessions", () => {
  for (const file of filesIn("gemini-cli")) {
    it.effect(`${path.basename(file)} imports: prompts, texts, shell commands and tokens match the source`, () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import")
        const report = yield* run(dir, "auto", [file])
        assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
        assert.strictEqual(report.sessions_created, 1)
        const source = report.sources[0]
        const events = eventsOf(dir, source?.session ?? "")
        const text = fs.readFileSync(file, "utf8")
        const messages: Array<Record<string, unknown>> = file.endsWith(".json")
          ? JSON.parse(text).messages
          : text.split("\n").filter((l) => l.trim().length > 0).map((l) => JSON.parse(l)).filter((r) =>
            typeof r["type"] === "string"
          )
        const prompts = messages.filter((m) => m["type"] === "user")
        assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts.length)
        const agentTexts = new Set(items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []))
        for (const m of messages.filter((m) => m["type"] === "gemini" && m["content"] !== "")) {
          assert.isTrue(agentTexts.has(m["content"] as string))
        }
        const commands = new Set(items(events).flatMap((i) => i.type === "command_execution" ? [i.command] : []))
        for (const m of messages) {
          for (const call of (m["toolCalls"] as Array<Record<string, unknown>> | undefined) ?? []) {
            if (call["name"] === "run_shell_command") {
              assert.isTrue(commands.has((call["args"] as Record<string, string>)["command"] ?? ""))
            }
          }
        }
        const perMessage = new Map<string, number>()
        for (const m of messages) {
          const tokens = m["tokens"] as Record<string, number> | undefined
          if (tokens !== undefined) perMessage.set(m["id"] as string, tokens["output"] ?? 0)
        }
        const sourceTotal = [...perMessage.values()].reduce((a, b) => a + b, 0)
        assert.strictEqual(outputTokens(events) + (source?.open_turn_usage.output_tokens ?? 0), sourceTotal)
        const again = yield* run(dir, "gemini", [file])
        assert.strictEqual(again.sessions_unchanged, 1)
      }))
  }

  it.effect("a JSON session nested 100 000 levels deep fails as its own source; the sources after it still import", () =>
    Effect.gen(function*() {
      const file = filesIn("gemini-cli").find((f) => f.endsWith(".json")) ?? ""
      const session = JSON.parse(fs.readFileSync(file, "utf8"))
      const src = yield* tempDir("import-src")
      const depth = 100_000
      const deep = "[".repeat(depth) + "]".repeat(depth)
      const hostile = JSON.stringify({ ...session, sessionId: "hostile", messages: [] }).replace(
        "\"messages\":[]",
        `"messages":[{"id":"m","type":"user","content":${deep}}]`
      )
      fs.writeFileSync(path.join(src, "a-hostile.json"), hostile)
      fs.writeFileSync(path.join(src, "b-good.json"), JSON.stringify(session))
      for (const format of ["gemini", "auto"] as const) {
        const sessions = yield* tempDir("import")
        const report = yield* run(sessions, format, [src])
        const byName = new Map(report.sources.map((r) => [path.basename(r.path), r]))
        assert.notInclude(["created", "updated"], byName.get("a-hostile.json")?.status, format)
        assert.strictEqual(byName.get("b-good.json")?.status, "created", `${format}: ${JSON.stringify(report.sources)}`)
        assert.strictEqual(report.sessions_created, 1)
      }
    }))

  it.effect("a JSON session that gained messages imports only them; one whose old messages changed is refused", () =>
    Effect.gen(function*() {
      const file = filesIn("gemini-cli").find((f) => f.endsWith(".json")) ?? ""
      const session = JSON.parse(fs.readFileSync(file, "utf8"))
      const all: Array<unknown> = session.messages
      const sessions = yield* tempDir("import")
      const whole = yield* tempDir("import")
      const src = yield* tempDir("import-src")
      const write = (messages: Array<unknown>) =>
        fs.writeFileSync(path.join(src, "session.json"), JSON.stringify({ ...session, messages }, null, 2))
      write(all)
      yield* run(whole, "gemini", [path.join(src, "session.json")])
      write(all.slice(0, 2))
      yield* run(sessions, "gemini", [path.join(src, "session.json")])
      write(all)
      const grown = yield* run(sessions, "gemini", [path.join(src, "session.json")])
      assert.strictEqual(grown.sessions_updated, 1)
      assert.deepStrictEqual(logBytes(sessions), logBytes(whole))
      write([{ id: "x", type: "user", content: "changed" }, ...all.slice(1)])
      const changed = yield* run(sessions, "gemini", [path.join(src, "session.json")])
      assert.strictEqual(changed.sources[0]?.status, "refused")
    }))

  it.effect("two files holding one session: the second is refused, naming the file the session came from", () =>
    Effect.gen(function*() {
      const file = codexFiles[0] ?? ""
      const lines = fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0)
      const src = yield* tempDir("import-src")
      const first = path.join(src, "a-rollout.jsonl")
      const shorter = path.join(src, "b-rollout.jsonl")
      const other = path.join(src, "c-rollout.jsonl")
      fs.writeFileSync(first, `${lines.join("\n")}\n`)
      fs.writeFileSync(shorter, `${lines.slice(0, 2).join("\n")}\n`)
      // Same session, same length, another last record: what a changed source looks like.
      fs.writeFileSync(other, `${[...lines.slice(0, -1), lines[0] ?? ""].join("\n")}\n`)
      const sessions = yield* tempDir("import")
      const report = yield* run(sessions, "codex", [first, shorter, other])
      const byName = new Map(report.sources.map((r) => [path.basename(r.path), r]))
      assert.strictEqual(byName.get("a-rollout.jsonl")?.status, "created")
      for (const name of ["b-rollout.jsonl", "c-rollout.jsonl"]) {
        assert.strictEqual(byName.get(name)?.status, "refused", name)
        assert.include(byName.get(name)?.reason, `imported from another source, ${first}`, name)
      }
      // The source itself, imported again, is unchanged: nothing about another source.
      const again = yield* run(sessions, "codex", [first])
      assert.strictEqual(again.sources[0]?.status, "unchanged")
      assert.strictEqual(again.sources[0]?.reason ?? "", "")
    }))
})
