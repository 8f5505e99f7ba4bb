/**
 * The importer on a real Claude Code 2.1.39 project directory (`fixtures/realdata/claude-code-project`,
 * PROVENANCE.md there): a main transcript with a `<persisted-output>` tool result, its
 * `subagents/agent-*.jsonl` (a `Task` subagent and a compaction one) and the session's
 * `tool-results/` file. Every session has its turns = prompts, every assistant text in an
 * `agent_message`, every `Bash` command in a `command_execution`, output tokens equal to the
 * source's own (each `message.id` once), source times, `completed`, `verify` clean, and a
 * byte-identical re-import; the separated result arrives whole; a missing separated file is a
 * reported skip; one over the limit keeps its ends; a link or a path outside `tool-results/` is
 * never read.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { claudeToolResultRefs, isClaudePrompt } from "@logbook/domain"
import { SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { importSessions } from "../../src/import/Importer.ts"
import { MAX_SEPARATED_RESULT_BYTES, toolResultsDirOf } from "../../src/import/internal/claudeToolResultFiles.ts"
import { verifySession } from "../../src/session/Verification.ts"
import { eventsOf, items, logBytes } from "./support/sessionEvents.ts"

const projectDir = path.join(import.meta.dirname, "..", "fixtures", "realdata", "claude-code-project")
const SESSION = "8463c716-a2ea-4c14-9efa-87158ebd9f20"
const mainFile = path.join(projectDir, `${SESSION}.jsonl`)
const subagentFiles = fs.readdirSync(path.join(projectDir, SESSION, "subagents")).sort().map((name) =>
  path.join(projectDir, SESSION, "subagents", name)
)
const PERSISTED_CALL = "toolu_019CpL49DWBenUxVVCWEXz3L"
const separatedFile = path.join(projectDir, SESSION, "tool-results", `${PERSISTED_CALL}.txt`)

const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

type Rec = Record<string, unknown>

const recordsOf = (file: string): Array<Rec> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim().length > 0).map((l) => JSON.parse(l))

const contentOf = (r: Rec): Array<Rec> => {
  const content = (r["message"] as Rec | undefined)?.["content"]
  return Array.isArray(content) ? content : []
}

const manifestOf = (sessionsDir: string, session: string): Rec =>
  JSON.parse(fs.readFileSync(sessionPaths(sessionsDir, session).manifest, "utf8"))

const turnOutput = (events: ReadonlyArray<ThreadEvent>): number =>
  events.reduce(
    (n, e) => n + (e.type === "turn.completed" || e.type === "turn.failed" ? (e.usage?.output_tokens ?? 0) : 0),
    0
  )

const sameInstant = (a: unknown, b: unknown): boolean =>
  typeof a === "string" && typeof b === "string" && Date.parse(a) === Date.parse(b)

/** Imports `paths` as finished sources (the clock far past every file's modification). */
const importFinished = (sessionsDir: string, paths: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
    return yield* importSessions({ sessionsDir, format: "auto", paths }).pipe(Effect.provide(storeLayer))
  })

/** The completed `command_execution` of the `callIndex`-th command started (calls start in order). */
const commandOf = (events: ReadonlyArray<ThreadEvent>, callIndex: number) => {
  const started = events.flatMap((e) =>
    e.type === "item.started" && e.item.type === "command_execution" ? [e.item.id] : []
  )
  return items(events).find((i) => i.type === "command_execution" && i.id === started[callIndex])
}

/** The position of `PERSISTED_CALL` among the transcript's `Bash` calls. */
const persistedIndex = recordsOf(mainFile).filter((r) => r["type"] === "assistant").flatMap(contentOf).filter((b) =>
  b["type"] === "tool_use" && b["name"] === "Bash"
).findIndex((b) => b["id"] === PERSISTED_CALL)

describe("A real Claude Code 2.1.39 project directory", () => {
  for (const file of [mainFile, ...subagentFiles]) {
    it.effect(
      `${path.basename(file)}: turns, texts, commands, tokens and times match the source; completed`,
      () =>
        Effect.gen(function*() {
          const dir = yield* tempDir("claude-project")
          const report = yield* importFinished(dir, [projectDir])
          assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
          assert.strictEqual(report.sources_empty, 0, JSON.stringify(report.sources))
          const source = report.sources.find((s) => s.path === file)
          const records = recordsOf(file)
          const session = source?.session ?? ""
          if (file !== mainFile) assert.strictEqual(source?.parent_session, `claude-${SESSION}`)
          const events = eventsOf(dir, session)
          const prompts = records.filter((r) => isClaudePrompt(r)).length
          assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts)
          const blocks = records.filter((r) => r["type"] === "assistant").flatMap(contentOf)
          const texts = new Set(items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []))
          for (const b of blocks.filter((b) => b["type"] === "text" && String(b["text"]).length > 0)) {
            assert.isTrue(texts.has(String(b["text"])), String(b["text"]).slice(0, 60))
          }
          const bash = blocks.filter((b) => b["type"] === "tool_use" && b["name"] === "Bash")
          const commands = items(events).filter((i) => i.type === "command_execution")
          // Parallel calls complete in the order their results came: the same commands, maybe reordered.
          assert.deepStrictEqual(
            commands.map((c) => c.type === "command_execution" ? c.command : "").sort(),
            bash.map((b) => String((b["input"] as Rec)["command"])).sort()
          )
          const perMessage = new Map<string, number>()
          for (const r of records.filter((r) => r["type"] === "assistant")) {
            const m = r["message"] as Rec
            perMessage.set(String(m["id"]), Number((m["usage"] as Rec | undefined)?.["output_tokens"] ?? 0))
          }
          const sourceTokens = [...perMessage.values()].reduce((a, b) => a + b, 0)
          assert.strictEqual(turnOutput(events), sourceTokens)
          const manifest = manifestOf(dir, session)
          assert.strictEqual(manifest["status"], "completed")
          assert.strictEqual(manifest["turn_count"], prompts)
          const times = records.flatMap((r) => typeof r["timestamp"] === "string" ? [r["timestamp"]] : [])
          assert.isTrue(sameInstant(manifest["created_at"], times[0]), String(manifest["created_at"]))
          assert.isTrue(sameInstant(manifest["updated_at"], times[times.length - 1]), String(manifest["updated_at"]))
          const verified = yield* verifySession(dir, session).pipe(Effect.provide(storeLayer))
          assert.deepStrictEqual(verified.findings, [])
          const before = logBytes(dir)
          const again = yield* importFinished(dir, [projectDir])
          assert.strictEqual(again.sessions_unchanged, 3)
          assert.deepStrictEqual(logBytes(dir), before)
        }),
      60_000
    )
  }

  it.effect("the tool result Claude Code moved to tool-results/ arrives whole", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("claude-project")
      const report = yield* importFinished(dir, [projectDir])
      const main = report.sources.find((s) => s.path === mainFile)
      assert.strictEqual(main?.separated_results_read, 1)
      assert.deepStrictEqual(main?.separated_results_missing, [])
      const command = commandOf(eventsOf(dir, `claude-${SESSION}`), persistedIndex)
      assert.strictEqual(
        command?.type === "command_execution" ? command.aggregated_output : "",
        fs.readFileSync(separatedFile, "utf8")
      )
      assert.strictEqual(command?.type === "command_execution" ? command.exit_code : -1, 0)
    }), 60_000)
})

/** A one-call Claude transcript (hand-written, shaped as 2.1.x writes it) whose result names `file`. */
const placeholderTranscript = (session: string, reference: string, stdout?: string): string => {
  const base = { sessionId: session, version: "2.1.39", isSidechain: false, cwd: "/w" }
  const records = [
    { ...base, type: "user", timestamp: "2026-02-11T10:00:00.000Z", message: { role: "user", content: "run it" } },
    {
      ...base,
      type: "assistant",
      timestamp: "2026-02-11T10:00:01.000Z",
      message: {
        id: "msg_1",
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_A", name: "Bash", input: { command: "make test" } }],
        usage: { input_tokens: 5, output_tokens: 7 }
      }
    },
    {
      ...base,
      type: "user",
      timestamp: "2026-02-11T10:00:09.000Z",
      message: {
        role: "user",
        content: [{
          tool_use_id: "toolu_A",
          type: "tool_result",
          content: `<persisted-output>\nOutput too large (2MB). Full output saved to: ${reference}\n\n` +
            "Preview (first 2KB):\nPREVIEW\n...\n</persisted-output>"
        }]
      },
      toolUseResult: { stdout: stdout ?? "", stderr: "", interrupted: false, isImage: false }
    }
  ]
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n"
}

const SID = "5a6b7c8d-1e2f-4a3b-9c4d-5e6f7a8b9c0d"

const layout = (root: string, reference: string, stdout?: string): string => {
  const file = path.join(root, `${SID}.jsonl`)
  fs.mkdirSync(path.join(root, SID, "tool-results"), { recursive: true })
  fs.writeFileSync(file, placeholderTranscript(SID, reference, stdout))
  return file
}

const outputOf = (sessionsDir: string): string => {
  const command = commandOf(eventsOf(sessionsDir, `claude-${SID}`), 0)
  return command?.type === "command_execution" ? command.aggregated_output : ""
}

describe("Separated tool results", () => {
  it.effect("the file is read in place of the placeholder (before the record's stdout); a walk skips it as a companion", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("claude-sep")
      const sessions = yield* tempDir("claude-sep-s")
      layout(root, `/home/u/.claude/projects/p/${SID}/tool-results/toolu_A.json`, "WHOLE STDOUT")
      fs.writeFileSync(path.join(root, SID, "tool-results", "toolu_A.json"), "{\"from\": \"the file\"}")
      const report = yield* importFinished(sessions, [root])
      assert.strictEqual(report.sources_empty, 0, JSON.stringify(report.sources))
      const companion = report.sources.find((s) => s.path.endsWith("toolu_A.json"))
      assert.strictEqual(companion?.status, "ignored")
      assert.include(companion?.reason ?? "", "separated tool result")
      const main = report.sources.find((s) => s.session === `claude-${SID}`)
      assert.strictEqual(main?.separated_results_read, 1)
      assert.strictEqual(outputOf(sessions), "{\"from\": \"the file\"}")
    }))

  it.effect("a missing file is a reported skip: the import succeeds with the record's own stdout", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("claude-sep")
      const sessions = yield* tempDir("claude-sep-s")
      const file = layout(root, `/home/u/.claude/projects/p/${SID}/tool-results/toolu_A.txt`, "WHOLE STDOUT")
      const report = yield* importFinished(sessions, [file])
      assert.strictEqual(report.sources_failed, 0)
      assert.strictEqual(report.sources[0]?.status, "created")
      assert.deepStrictEqual(report.sources[0]?.separated_results_missing, [
        path.join(root, SID, "tool-results", "toolu_A.txt")
      ])
      assert.strictEqual(report.sources[0]?.separated_results_missing_count, 1)
      assert.strictEqual(outputOf(sessions), "WHOLE STDOUT")
    }))

  it.effect("a missing file and no stdout keep the transcript's placeholder", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("claude-sep")
      const sessions = yield* tempDir("claude-sep-s")
      const file = layout(root, `/x/${SID}/tool-results/toolu_A.txt`)
      yield* importFinished(sessions, [file])
      assert.include(outputOf(sessions), "PREVIEW")
    }))

  it.effect("a file over the limit keeps its first and last halves around a line naming what was left out", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("claude-sep")
      const sessions = yield* tempDir("claude-sep-s")
      const file = layout(root, `/x/${SID}/tool-results/big.txt`)
      const half = MAX_SEPARATED_RESULT_BYTES / 2
      // "é" is two bytes: the cuts fall inside characters and must move to a boundary.
      const big = "A" + "é".repeat(half) + "Z"
      fs.writeFileSync(path.join(root, SID, "tool-results", "big.txt"), big)
      const report = yield* importFinished(sessions, [file])
      assert.strictEqual(report.sources[0]?.separated_results_cut, 1)
      const output = outputOf(sessions)
      assert.isTrue(output.startsWith("Aé"))
      assert.isTrue(output.endsWith("éZ"))
      assert.notInclude(output, "\uFFFD")
      const left = /\[… (\d+) bytes of this tool result not imported …\]/u.exec(output)?.[1]
      const kept = Buffer.byteLength(output.replace(/\n\[… \d+ bytes of this tool result not imported …\]\n/u, ""))
      assert.strictEqual(Number(left) + kept, Buffer.byteLength(big))
      assert.isAtMost(kept, MAX_SEPARATED_RESULT_BYTES)
    }))

  it.effect("a link in tool-results/ is not followed (reported missing)", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("claude-sep")
      const sessions = yield* tempDir("claude-sep-s")
      const file = layout(root, `/x/${SID}/tool-results/toolu_A.txt`)
      fs.writeFileSync(path.join(root, "secret.txt"), "SECRET")
      fs.symlinkSync(path.join(root, "secret.txt"), path.join(root, SID, "tool-results", "toolu_A.txt"))
      const report = yield* importFinished(sessions, [file])
      assert.strictEqual(report.sources[0]?.separated_results_missing_count, 1)
      assert.notInclude(outputOf(sessions), "SECRET")
    }))

  it.effect("a tool-results directory that is a link is not followed", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("claude-sep")
      const sessions = yield* tempDir("claude-sep-s")
      const elsewhere = yield* tempDir("claude-sep-elsewhere")
      const file = layout(root, `/x/${SID}/tool-results/toolu_A.txt`)
      fs.writeFileSync(path.join(elsewhere, "toolu_A.txt"), "SECRET")
      fs.rmSync(path.join(root, SID, "tool-results"), { recursive: true })
      fs.symlinkSync(elsewhere, path.join(root, SID, "tool-results"))
      const report = yield* importFinished(sessions, [file])
      assert.strictEqual(report.sources[0]?.separated_results_missing_count, 1)
      assert.notInclude(outputOf(sessions), "SECRET")
    }))

  it("a session's transcript and its subagents, nested at any depth, share the session's tool-results/", () => {
    const p = path.join(path.sep, "h", ".claude", "projects", "-w")
    const dir = path.join(p, SID, "tool-results")
    assert.strictEqual(toolResultsDirOf(path.join(p, `${SID}.jsonl`)), dir)
    assert.strictEqual(toolResultsDirOf(path.join(p, SID, "subagents", "agent-a1.jsonl")), dir)
    assert.strictEqual(toolResultsDirOf(path.join(p, SID, "subagents", "workflows", "w1", "agent-a2.jsonl")), dir)
  })

  it("only a plain file name in a tool-results directory is a reference", () => {
    const record = (reference: string) => JSON.parse(placeholderTranscript(SID, reference).split("\n")[2] ?? "{}")
    assert.deepStrictEqual(claudeToolResultRefs(record(`C:\\Users\\u\\.claude\\p\\${SID}\\tool-results\\b5.txt`)), [
      { toolUseId: "toolu_A", file: "b5.txt" }
    ])
    assert.deepStrictEqual(claudeToolResultRefs(record("/x/tool-results/../../etc/passwd")), [])
    assert.deepStrictEqual(claudeToolResultRefs(record("/x/elsewhere/toolu_A.txt")), [])
    assert.deepStrictEqual(claudeToolResultRefs(record("/x/tool-results/.hidden.txt")), [])
  })
})

describe("A live Claude project that goes idle", () => {
  it.effect(
    "a live prefix, then the finished whole, equals the whole at once (cuts inside the separated result's line too)",
    () =>
      Effect.gen(function*() {
        const bytes = fs.readFileSync(mainFile)
        const MTIME = 1_700_000_000
        /** A copy of the project's main transcript holding `content`, with the session's tool-results/. */
        const copyProject = (root: string, content: Uint8Array): string => {
          fs.cpSync(path.join(projectDir, SESSION, "tool-results"), path.join(root, SESSION, "tool-results"), {
            recursive: true
          })
          const file = path.join(root, `${SESSION}.jsonl`)
          fs.writeFileSync(file, content)
          fs.utimesSync(file, MTIME, MTIME)
          return file
        }
        const run = (sessionsDir: string, file: string, live: boolean) =>
          Effect.gen(function*() {
            yield* TestClock.setTime(MTIME * 1000 + (live ? 1000 : 3_600_000))
            return yield* importSessions({ sessionsDir, format: "auto", paths: [file] }).pipe(
              Effect.provide(storeLayer)
            )
          })
        const whole = yield* tempDir("claude-live-whole")
        const wholeReport = yield* run(whole, copyProject(yield* tempDir("claude-live-src"), bytes), false)
        assert.strictEqual(wholeReport.sources[0]?.separated_results_read, 1)
        const expected = logBytes(whole)
        const resultLine = bytes.indexOf(Buffer.from(`"tool_use_id":"${PERSISTED_CALL}","type":"tool_result"`))
        assert.isAbove(resultLine, 0)
        const lastNl = bytes.lastIndexOf(10, bytes.length - 2) + 1
        for (const cut of [resultLine + 200, resultLine - 1, lastNl + 1, Math.floor(bytes.length / 3)]) {
          const sessions = yield* tempDir("claude-live-half")
          const root = yield* tempDir("claude-live-src")
          const file = copyProject(root, bytes.subarray(0, cut))
          yield* run(sessions, file, true)
          fs.writeFileSync(file, bytes)
          fs.utimesSync(file, MTIME, MTIME)
          yield* run(sessions, file, false)
          assert.deepStrictEqual(logBytes(sessions), expected, `cut at ${cut}`)
        }
      }),
    120_000
  )
})
