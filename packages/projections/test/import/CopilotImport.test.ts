/**
 * The GitHub Copilot CLI importer on the `events.jsonl` fixtures in `test/fixtures/realdata/copilot-cli`
 * (PROVENANCE.md there): every assistant text lands in an `agent_message`, every completed shell
 * call in a `command_execution` with its output, turns equal prompts; and hostile input (invalid
 * UTF-8, unknown record types, a line broken by a raw newline, a huge message) never crashes the
 * import: bad lines are reported by number and the sources after them still import.
 */
import { assert, describe, it } from "@effect/vitest"
import { SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { importSessions } from "../../src/import/Importer.ts"
import { eventsOf, items } from "./support/sessionEvents.ts"

const dir = path.join(import.meta.dirname, "..", "fixtures", "realdata", "copilot-cli")
const files = fs.readdirSync(dir).sort().map((name) => path.join(dir, name))
const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

type Rec = Record<string, unknown>
const recordsOf = (file: string): Array<Rec> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim().length > 0).map((l) => JSON.parse(l))
const dataOf = (r: Rec): Rec => (r["data"] ?? {}) as Rec

const run = (sessionsDir: string, format: "copilot" | "auto", paths: ReadonlyArray<string>) =>
  importSessions({ sessionsDir, format, paths }).pipe(Effect.provide(storeLayer))

describe("Importer on GitHub Copilot CLI events", () => {
  for (const file of files) {
    it.effect(`${path.basename(file)} imports: prompts, texts and shell commands match the source`, () =>
      Effect.gen(function*() {
        const sessions = yield* tempDir("import-copilot")
        const report = yield* run(sessions, "copilot", [file])
        assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
        const source = report.sources[0]
        assert.strictEqual(source?.format, "copilot")
        const records = recordsOf(file)
        const start = records.find((r) => r["type"] === "session.start")
        assert.strictEqual(source?.session, `copilot-${String(dataOf(start ?? {})["sessionId"])}`)
        const events = eventsOf(sessions, source?.session ?? "")
        const prompts = records.filter((r) => r["type"] === "user.message")
        assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts.length)
        const texts = new Set(items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []))
        for (const r of records.filter((r) => r["type"] === "assistant.message")) {
          const text = String(dataOf(r)["content"] ?? "")
          if (text.length > 0) assert.isTrue(texts.has(text), `missing agent_message ${text.slice(0, 60)}`)
        }
        // Every completion of a shell tool call the log requested is a command with that output.
        const shellCalls = new Map<string, string>()
        for (const r of records) {
          const d = dataOf(r)
          const requests = (d["toolRequests"] ?? []) as Array<Rec>
          for (const q of requests) {
            if (["bash", "shell", "powershell"].includes(String(q["name"]))) shellCalls.set(String(q["toolCallId"]), "")
          }
          if (r["type"] === "tool.execution_start" && ["bash", "shell"].includes(String(d["toolName"]))) {
            shellCalls.set(String(d["toolCallId"]), "")
          }
        }
        const completed = records.filter((r) =>
          r["type"] === "tool.execution_complete" && shellCalls.has(String(dataOf(r)["toolCallId"]))
        )
        const commands = items(events).filter((i) => i.type === "command_execution")
        assert.strictEqual(commands.length, completed.length)
        const outputs = new Set(commands.map((c) => c.type === "command_execution" ? c.aggregated_output : ""))
        for (const r of completed) {
          const content = String(((dataOf(r)["result"] ?? {}) as Rec)["content"] ?? "")
          assert.isTrue(outputs.has(content), `missing output ${content.slice(0, 40)}`)
        }
      }))
  }
})

const env = (type: string, data: Rec, id: string, ts: string) =>
  JSON.stringify({ type, data, id, timestamp: ts, parentId: null })
const huge = "x".repeat(2_000_000)

/** A hostile Copilot CLI log: an unknown type, a broken line, a garbage line, a huge message, invalid UTF-8. */
const hostileBytes = (): Buffer =>
  Buffer.concat([
    Buffer.from(
      [
        env("session.start", { sessionId: "hostile-1", copilotVersion: "1.0.0" }, "e1", "2026-01-01T00:00:00.000Z"),
        env("user.message", { content: "go" }, "e2", "2026-01-01T00:00:01.000Z"),
        env(
          "assistant.message",
          { content: "", toolRequests: [{ toolCallId: "c1", name: "bash", arguments: "{\"command\":\"ls\"}" }] },
          "e3",
          "2026-01-01T00:00:01.500Z"
        ),
        env("future.kind", { anything: 1 }, "e3b", "2026-01-01T00:00:02.000Z"),
        // A tool result whose raw newline broke its line in two: rejoined.
        "{\"type\":\"tool.execution_complete\",\"data\":{\"toolCallId\":\"c1\",\"success\":true,\"result\":{\"content\":\"a",
        "b\"}},\"id\":\"e4\",\"timestamp\":\"2026-01-01T00:00:03.000Z\",\"parentId\":null}",
        "garbage that is no JSON",
        env("assistant.message", { content: huge }, "e5", "2026-01-01T00:00:04.000Z")
      ].join("\n") + "\n"
    ),
    Buffer.from([0xff, 0xfe, 0x0a]),
    Buffer.from(env("assistant.message", { content: "after" }, "e6", "2026-01-01T00:00:05.000Z") + "\n")
  ])

describe("Copilot CLI hostile input", () => {
  it.effect(
    "a broken line is rejoined; garbage, invalid UTF-8 and an unknown type are reported by line; a huge message imports; the next source too",
    () =>
      Effect.gen(function*() {
        const src = yield* tempDir("import-copilot-src")
        const sessions = yield* tempDir("import-copilot")
        const bad = path.join(src, "a", "events.jsonl")
        fs.mkdirSync(path.dirname(bad))
        fs.writeFileSync(bad, hostileBytes())
        const good = path.join(src, "b", "events.jsonl")
        fs.mkdirSync(path.dirname(good))
        fs.copyFileSync(files[0] ?? "", good)
        const report = yield* run(sessions, "copilot", [src])
        assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
        assert.strictEqual(report.sessions_created, 2)
        const hostile = report.sources.find((s) => s.session === "copilot-hostile-1")
        assert.deepStrictEqual(hostile?.lines_skipped.map((l) => l.line), [7, 9])
        assert.strictEqual(hostile?.records_skipped["future.kind"], 1)
        assert.isTrue(hostile?.warnings.some((w) => w.includes("1 record(s) rejoined")))
        const all = items(eventsOf(sessions, "copilot-hostile-1"))
        assert.deepStrictEqual(all.flatMap((i) => i.type === "agent_message" ? [i.text.length] : []), [huge.length, 5])
        assert.deepStrictEqual(
          all.flatMap((i) => i.type === "command_execution" ? [[i.command, i.aggregated_output]] : []),
          [["ls", "a\nb"]]
        )
      }),
    60_000
  )

  it.effect(
    "importing the hostile log cut at every line end, then whole, writes exactly the whole import",
    () =>
      Effect.gen(function*() {
        const bytes = hostileBytes()
        const src = yield* tempDir("import-copilot-src")
        const file = path.join(src, "events.jsonl")
        const whole = yield* tempDir("import-copilot-whole")
        fs.writeFileSync(file, bytes)
        yield* run(whole, "copilot", [file])
        const expected = fs.readFileSync(sessionPaths(whole, "copilot-hostile-1").events, "base64")
        const cuts: Array<number> = []
        for (let i = bytes.indexOf(10); i >= 0 && i < bytes.length - 1; i = bytes.indexOf(10, i + 1)) cuts.push(i + 1)
        for (const cut of [...cuts, cuts[3] === undefined ? 0 : cuts[3] + 20]) {
          const sessions = yield* tempDir("import-copilot-half")
          fs.writeFileSync(file, bytes.subarray(0, cut))
          yield* run(sessions, "copilot", [file])
          fs.writeFileSync(file, bytes)
          const second = yield* run(sessions, "copilot", [file])
          assert.strictEqual(second.sources_failed, 0, `cut ${cut}: ${JSON.stringify(second.sources)}`)
          assert.strictEqual(
            fs.readFileSync(sessionPaths(sessions, "copilot-hostile-1").events, "base64"),
            expected,
            `cut at byte ${cut}`
          )
        }
      }),
    120_000
  )
})
