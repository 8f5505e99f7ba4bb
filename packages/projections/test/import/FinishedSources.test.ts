/**
 * Finished sources and source time, on every real fixture in `test/fixtures/realdata`: a source not
 * modified for the idle window has every turn closed with its usage and its session `completed`;
 * the manifest's `created_at` / `updated_at` are the first and last source record times (the file's
 * modification time for `codex exec --json`, which has none); token totals equal the source's own;
 * `verify` is clean; re-importing is byte-identical; importing a live half and then the finished
 * whole equals importing the finished whole at once (cut points inside lines and inside the last
 * turn included); and retention never removes an imported session unless asked.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { isClaudePrompt } from "@logbook/domain"
import { Retention, SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { mulberry32, tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { DEFAULT_IDLE_WINDOW_MS, importSessions } from "../../src/import/Importer.ts"
import { verifySession } from "../../src/session/Verification.ts"
import { eventsOf, logBytes } from "./support/sessionEvents.ts"

const fixtures = path.join(import.meta.dirname, "..", "fixtures", "realdata")
const filesIn = (dir: string): Array<string> =>
  fs.readdirSync(path.join(fixtures, dir)).sort().map((name) => path.join(fixtures, dir, name))

const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

type Rec = Record<string, unknown>

/** What the source itself says: prompts, output tokens, first and last record time. */
interface SourceFacts {
  readonly prompts: number
  readonly outputTokens: number
  readonly firstTs: string | undefined
  readonly lastTs: string | undefined
}

const jsonl = (file: string): Array<Rec> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim().length > 0 && !l.startsWith("#")).map((l) =>
    JSON.parse(l)
  )

const timesOf = (records: ReadonlyArray<Rec>, key = "timestamp") => {
  const ts = records.flatMap((r) => typeof r[key] === "string" ? [r[key] as string] : [])
  return { firstTs: ts[0], lastTs: ts[ts.length - 1] }
}

const codexFacts = (file: string): SourceFacts => {
  const records = jsonl(file)
  const payloads = records.map((r) => (r["payload"] ?? {}) as Rec)
  const totals = payloads.filter((p) => p["type"] === "token_count" && p["info"] !== null).map((p) =>
    ((p["info"] as Record<string, Record<string, number>>)["total_token_usage"]?.["output_tokens"]) ?? 0
  )
  return {
    prompts: payloads.filter((p) => p["type"] === "user_message").length,
    outputTokens: totals.length === 0 ? 0 : Math.max(...totals),
    ...timesOf(records)
  }
}

const claudeFacts = (file: string): SourceFacts => {
  const records = jsonl(file)
  const perMessage = new Map<string, number>()
  for (const r of records.filter((r) => r["type"] === "assistant")) {
    const m = r["message"] as Rec
    perMessage.set(m["id"] as string, (m["usage"] as Record<string, number>)["output_tokens"] ?? 0)
  }
  return {
    prompts: records.filter((r) => isClaudePrompt(r)).length,
    outputTokens: [...perMessage.values()].reduce((a, b) => a + b, 0),
    ...timesOf(records)
  }
}

const execFacts = (file: string): SourceFacts => {
  const records = jsonl(file)
  const modified = new Date(fs.statSync(file).mtimeMs).toISOString()
  return {
    prompts: records.filter((r) => r["type"] === "turn.started").length,
    outputTokens: records.filter((r) => r["type"] === "turn.completed").reduce(
      (n, r) => n + ((r["usage"] as Record<string, number>)["output_tokens"] ?? 0),
      0
    ),
    firstTs: modified,
    lastTs: modified
  }
}

const geminiFacts = (file: string): SourceFacts => {
  const text = fs.readFileSync(file, "utf8")
  const messages: Array<Rec> = file.endsWith(".json")
    ? JSON.parse(text).messages
    : jsonl(file).filter((r) => typeof r["type"] === "string")
  const perMessage = new Map<string, number>()
  for (const m of messages) {
    const tokens = m["tokens"] as Record<string, number> | undefined
    if (tokens !== undefined) perMessage.set(m["id"] as string, tokens["output"] ?? 0)
  }
  const header: Rec = file.endsWith(".json") ? JSON.parse(text) : jsonl(file)[0] ?? {}
  const times = timesOf(messages)
  return {
    prompts: messages.filter((m) => m["type"] === "user").length,
    outputTokens: [...perMessage.values()].reduce((a, b) => a + b, 0),
    firstTs: typeof header["startTime"] === "string" ? header["startTime"] : times.firstTs,
    lastTs: times.lastTs
  }
}

const copilotFacts = (file: string): SourceFacts => {
  const records = jsonl(file)
  const data = (r: Rec) => (r["data"] ?? {}) as Rec
  const perMessage = records.filter((r) => r["type"] === "assistant.message").map((r) =>
    Number(data(r)["outputTokens"] ?? 0)
  )
  const shutdown = records.filter((r) => r["type"] === "session.shutdown").flatMap((r) =>
    Object.values((data(r)["modelMetrics"] ?? {}) as Record<string, { usage?: Record<string, number> }>)
  ).reduce((n, m) => n + (m.usage?.["outputTokens"] ?? 0), 0)
  const fromMessages = perMessage.reduce((a, b) => a + b, 0)
  const prompts = records.filter((r) => r["type"] === "user.message" && String(data(r)["content"]).trim() !== "")
  // Redacted logs hold placeholder timestamps: only real times are source times.
  const timed = records.filter((r) => !Number.isNaN(Date.parse(String(r["timestamp"]))))
  return {
    prompts: prompts.length,
    // Session totals (`session.shutdown`) belong to a turn only when one is open.
    outputTokens: fromMessages > 0 ? fromMessages : prompts.length > 0 ? shutdown : 0,
    ...timesOf(timed)
  }
}

const cursorFacts = (file: string): SourceFacts => {
  const records = jsonl(file)
  const modified = new Date(fs.statSync(file).mtimeMs).toISOString()
  const content = (r: Rec) => (((r["message"] ?? {}) as Rec)["content"] ?? []) as Array<Rec>
  return {
    prompts:
      records.filter((r) =>
        r["role"] === "user" && !content(r).some((b) => String(b["type"]).startsWith("tool")) &&
        content(r).some((b) => String(b["text"] ?? "").trim() !== "")
      ).length,
    outputTokens: 0,
    firstTs: modified,
    lastTs: modified
  }
}

const cases: ReadonlyArray<{ file: string; facts: (file: string) => SourceFacts }> = [
  ...filesIn("codex-rollout").map((file) => ({ file, facts: codexFacts })),
  ...filesIn("claude-code").map((file) => ({ file, facts: claudeFacts })),
  ...filesIn("claude-code-checks").map((file) => ({ file, facts: claudeFacts })),
  // The subagents of the real 2.1.39 project (its main transcript has its own tests, ClaudeProject.test.ts).
  ...filesIn(path.join("claude-code-project", "8463c716-a2ea-4c14-9efa-87158ebd9f20", "subagents")).map((file) => ({
    file,
    facts: claudeFacts
  })),
  ...filesIn("codex-exec-json").map((file) => ({ file, facts: execFacts })),
  ...filesIn("gemini-cli").map((file) => ({ file, facts: geminiFacts })),
  ...filesIn("copilot-cli").map((file) => ({ file, facts: copilotFacts })),
  ...filesIn("cursor").map((file) => ({ file, facts: cursorFacts }))
]

const manifestOf = (sessionsDir: string, session: string): Rec =>
  JSON.parse(fs.readFileSync(sessionPaths(sessionsDir, session).manifest, "utf8"))

const turnOutput = (events: ReadonlyArray<ThreadEvent>): number =>
  events.reduce(
    (n, e) => n + (e.type === "turn.completed" || e.type === "turn.failed" ? (e.usage?.output_tokens ?? 0) : 0),
    0
  )

const sameInstant = (a: unknown, b: string | undefined): boolean =>
  typeof a === "string" && b !== undefined && Date.parse(a) === Date.parse(b)

/** Moves the test clock to just past the idle window after `file` was last modified. */
const idleAfter = (file: string) => TestClock.setTime(fs.statSync(file).mtimeMs + DEFAULT_IDLE_WINDOW_MS)

const run = (sessionsDir: string, paths: ReadonlyArray<string>) =>
  importSessions({ sessionsDir, format: "auto", paths }).pipe(Effect.provide(storeLayer))

describe("A finished source", () => {
  for (const { facts, file } of cases) {
    it.effect(
      `${path.basename(file)}: every turn closed with its usage, completed, at source time, verify clean`,
      () =>
        Effect.gen(function*() {
          const source = facts(file)
          const dir = yield* tempDir("import-finished")
          yield* idleAfter(file)
          const report = yield* run(dir, [file])
          assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
          const session = report.sources[0]?.session ?? ""
          const events = eventsOf(dir, session)
          const manifest = manifestOf(dir, session)
          assert.strictEqual(manifest["status"], "completed")
          assert.strictEqual(manifest["turn_count"], source.prompts)
          assert.isFalse(manifest["in_turn"])
          assert.strictEqual(events.filter((e) => e.type === "turn.started").length, source.prompts)
          assert.strictEqual(report.sources[0]?.open_turn_usage.output_tokens, 0)
          const completed = events.filter((e) => e.type === "thread.completed")
          assert.strictEqual(completed.length, 1)
          assert.strictEqual(
            completed[0]?.type === "thread.completed" ? completed[0].usage.output_tokens : -1,
            source.outputTokens
          )
          assert.strictEqual(turnOutput(events), source.outputTokens)
          assert.isTrue(
            sameInstant(manifest["updated_at"], source.lastTs),
            `${manifest["updated_at"]} vs ${source.lastTs}`
          )
          assert.isTrue(
            sameInstant(manifest["created_at"], source.firstTs),
            `${manifest["created_at"]} vs ${source.firstTs}`
          )
          const verified = yield* verifySession(dir, session).pipe(Effect.provide(storeLayer))
          assert.deepStrictEqual(verified.findings, [])
          const before = logBytes(dir)
          const again = yield* run(dir, [file])
          assert.strictEqual(again.sessions_unchanged, 1)
          assert.deepStrictEqual(logBytes(dir), before)
        }),
      60_000
    )
  }
})

describe("A live source that goes idle", () => {
  for (const { file } of cases.filter((c) => c.file.endsWith(".jsonl"))) {
    it.effect(
      `${path.basename(file)}: a live prefix, then the finished whole, equals the finished whole at once`,
      () =>
        Effect.gen(function*() {
          const bytes = fs.readFileSync(file)
          const src = yield* tempDir("import-src")
          const whole = yield* tempDir("import-whole")
          const wholeFile = path.join(src, "whole.jsonl")
          fs.writeFileSync(wholeFile, bytes)
          fs.utimesSync(wholeFile, 1_700_000_000, 1_700_000_000)
          yield* idleAfter(wholeFile)
          yield* run(whole, [wholeFile])
          const expected = logBytes(whole)
          const prng = mulberry32(bytes.length + 7)
          const lastNl = bytes.lastIndexOf(10, bytes.length - 2) + 1
          // Random cuts (most inside a line), and cuts inside the trailing turn's last line.
          const cuts = [lastNl, lastNl + 1, ...Array.from({ length: 3 }, () => Math.floor(prng.next() * bytes.length))]
          for (const cut of cuts) {
            const sessions = yield* tempDir("import-half")
            const growing = path.join(src, "whole.jsonl")
            fs.writeFileSync(growing, bytes.subarray(0, cut))
            fs.utimesSync(growing, 1_700_000_000, 1_700_000_000)
            // Live: modified just now (the clock one second after the file's time).
            yield* TestClock.setTime(fs.statSync(growing).mtimeMs + 1000)
            yield* run(sessions, [growing])
            fs.writeFileSync(growing, bytes)
            fs.utimesSync(growing, 1_700_000_000, 1_700_000_000)
            yield* idleAfter(growing)
            const second = yield* run(sessions, [growing])
            assert.strictEqual(second.sources_failed, 0, `cut ${cut}: ${JSON.stringify(second.sources)}`)
            assert.deepStrictEqual(logBytes(sessions), expected, `cut at byte ${cut}`)
          }
        }),
      120_000
    )
  }

  it.effect("a source imported live keeps its last turn open; the first import after it goes idle closes it", () =>
    Effect.gen(function*() {
      const file = filesIn("claude-code").find((f) => f.includes("tiny")) ?? ""
      const dir = yield* tempDir("import-live")
      yield* TestClock.setTime(fs.statSync(file).mtimeMs + 1000)
      const live = yield* run(dir, [file])
      const session = live.sources[0]?.session ?? ""
      assert.strictEqual(manifestOf(dir, session)["status"], "active")
      assert.isTrue(manifestOf(dir, session)["in_turn"])
      assert.isAbove(live.sources[0]?.open_turn_usage.output_tokens ?? 0, 0)
      yield* idleAfter(file)
      const idle = yield* run(dir, [file])
      assert.strictEqual(idle.sources[0]?.status, "updated")
      assert.strictEqual(manifestOf(dir, session)["status"], "completed")
      assert.strictEqual(manifestOf(dir, session)["turn_count"], claudeFacts(file).prompts)
      assert.strictEqual(turnOutput(eventsOf(dir, session)), claudeFacts(file).outputTokens)
    }))
})

describe("Watching a source that goes idle", () => {
  it.effect("an unchanged file is skipped by its signature while live, and read once more when it goes idle", () =>
    Effect.gen(function*() {
      const file = filesIn("claude-code").find((f) => f.includes("tiny")) ?? ""
      const dir = yield* tempDir("import-watch")
      const signatures = new Map<string, string>()
      const pass = () =>
        importSessions({ sessionsDir: dir, format: "claude", paths: [file], signatures }).pipe(
          Effect.provide(storeLayer)
        )
      yield* TestClock.setTime(fs.statSync(file).mtimeMs + 1000)
      assert.strictEqual((yield* pass()).sessions_created, 1)
      assert.strictEqual((yield* pass()).sessions_unchanged, 1)
      yield* idleAfter(file)
      const idle = yield* pass()
      assert.strictEqual(idle.sessions_updated, 1)
      assert.strictEqual(manifestOf(dir, idle.sources[0]?.session ?? "")["status"], "completed")
      assert.strictEqual((yield* pass()).sessions_unchanged, 1)
    }))
})

describe("Imported history is an archive", () => {
  const retentionLayer = Layer.provideMerge(Retention.layer, storeLayer)
  const DAY = 86_400_000

  it.effect(
    "retention { maxSessions: 0, maxAgeDays: 1 } 60 days later removes no imported session, finished or live",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-archive")
        const src = yield* tempDir("import-src")
        // One live source (modified now), the others finished.
        // A copy under another session id, so it is a session of its own.
        const live = path.join(src, "live.jsonl")
        const original = fs.readFileSync(filesIn("claude-code")[0] ?? "", "utf8")
        const id = /"sessionId":"([^"]+)"/u.exec(original)?.[1] ?? ""
        fs.writeFileSync(live, original.replaceAll(id, "00000000-0000-4000-8000-000000000026"))
        const latest = Math.max(...cases.map((c) => fs.statSync(c.file).mtimeMs))
        yield* TestClock.setTime(latest + DEFAULT_IDLE_WINDOW_MS)
        fs.utimesSync(live, (latest + DEFAULT_IDLE_WINDOW_MS) / 1000, (latest + DEFAULT_IDLE_WINDOW_MS) / 1000)
        const report = yield* run(dir, [...cases.map((c) => c.file), live])
        assert.strictEqual(report.sources_failed, 0, JSON.stringify(report.sources))
        const sessions = fs.readdirSync(dir).sort()
        assert.isAtLeast(sessions.length, cases.length)
        const retention = yield* Retention
        yield* TestClock.adjust(60 * DAY)
        const kept = yield* retention.apply(dir, { maxSessions: 0, maxAgeDays: 1 })
        assert.deepStrictEqual(kept, { marked: [], removed: [] })
        assert.deepStrictEqual(fs.readdirSync(dir).sort(), sessions)
        // Asked for, they go: the live one is swept (completed) first, then every one is removed.
        const removed = yield* retention.apply(dir, { maxSessions: 0, maxAgeDays: 1 }, { includeImported: true })
        assert.strictEqual(removed.marked.length, 1)
        assert.strictEqual(removed.removed.length, sessions.length)
      }).pipe(Effect.provide(retentionLayer)),
    120_000
  )
})
