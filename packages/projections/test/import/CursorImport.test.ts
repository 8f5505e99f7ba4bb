/**
 * The Cursor agent transcript importer on the transcripts in `test/fixtures/realdata/cursor`
 * (PROVENANCE.md there): every assistant text lands in an `agent_message`, turns equal prompts,
 * tool blocks (where a transcript has them) are invocations, nothing is invented (no usage); the
 * flat `<id>.jsonl`, the nested `<id>/<id>.jsonl` and a subagent's `subagents/<id>.jsonl` layouts
 * name their sessions after the file.
 */
import { assert, describe, it } from "@effect/vitest"
import { SessionFs, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { importSessions } from "../../src/import/Importer.ts"
import { eventsOf, items } from "./support/sessionEvents.ts"

const dir = path.join(import.meta.dirname, "..", "fixtures", "realdata", "cursor")
const files = fs.readdirSync(dir).sort().map((name) => path.join(dir, name))
const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

type Rec = Record<string, unknown>
const recordsOf = (file: string): Array<Rec> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim().length > 0).map((l) => JSON.parse(l))
const blocks = (r: Rec): Array<Rec> => (((r["message"] ?? {}) as Rec)["content"] ?? []) as Array<Rec>

const run = (sessionsDir: string, format: "cursor" | "auto", paths: ReadonlyArray<string>) =>
  importSessions({ sessionsDir, format, paths }).pipe(Effect.provide(storeLayer))

describe("Importer on Cursor agent transcripts", () => {
  for (const file of files) {
    it.effect(`${path.basename(file)} imports: prompts, texts and tool blocks match the source; no usage invented`, () =>
      Effect.gen(function*() {
        const sessions = yield* tempDir("import-cursor")
        const report = yield* run(sessions, "auto", [file])
        assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
        const source = report.sources[0]
        assert.strictEqual(source?.format, "cursor")
        assert.strictEqual(source?.session, `cursor-${path.basename(file, ".jsonl")}`)
        const events = eventsOf(sessions, source?.session ?? "")
        const records = recordsOf(file)
        const prompts = records.filter((r) =>
          r["role"] === "user" && !blocks(r).some((b) => String(b["type"]).startsWith("tool"))
        )
        assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts.length)
        const texts = new Set(items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []))
        for (const r of records.filter((r) => r["role"] === "assistant")) {
          for (const b of blocks(r).filter((b) => typeof b["text"] === "string")) {
            assert.isTrue(texts.has(String(b["text"])), `missing ${String(b["text"]).slice(0, 40)}`)
          }
        }
        const tools = records.flatMap((r) => blocks(r)).filter((b) =>
          b["type"] === "tool_use" || b["type"] === "tool_call"
        )
        assert.strictEqual(items(events).filter((i) => i.type === "tool_invocation").length, tools.length)
        for (const e of events) {
          if (e.type === "turn.completed") assert.strictEqual(e.usage?.output_tokens ?? 0, 0)
        }
      }))
  }

  it.effect("the flat, nested and subagent layouts name their sessions after the file", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("import-cursor")
      const root = yield* tempDir("import-cursor-src")
      const transcripts = path.join(root, "projects", "Users-me-repo", "agent-transcripts")
      const nested = path.join(transcripts, "1b2c3d4e")
      fs.mkdirSync(path.join(nested, "subagents"), { recursive: true })
      fs.copyFileSync(files[0] ?? "", path.join(transcripts, "0a1b2c3d.jsonl"))
      fs.copyFileSync(files[1] ?? "", path.join(nested, "1b2c3d4e.jsonl"))
      fs.copyFileSync(files[2] ?? "", path.join(nested, "subagents", "9f8e7d6c.jsonl"))
      const report = yield* run(sessions, "cursor", [root])
      assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
      assert.deepStrictEqual(
        report.sources.map((s) => [s.session, s.parent_session]).sort(),
        [["cursor-0a1b2c3d", undefined], ["cursor-1b2c3d4e", undefined], ["cursor-9f8e7d6c", "cursor-1b2c3d4e"]]
      )
    }))
})
