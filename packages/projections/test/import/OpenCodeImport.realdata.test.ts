/**
 * The OpenCode importer on a real OpenCode 1.15.7 session (`test/fixtures/realdata/opencode/`,
 * PROVENANCE.md there): the session and its messages as OpenCode's local API returned them, joined
 * here into the document `opencode export` writes (`{info, messages}`). Turns equal the prompts,
 * texts, reasoning and the `write` edit match, tokens equal the source's `step-finish` parts, source
 * times, `verify` clean, re-import byte-identical, and an export that gained a message imports to the
 * same log as importing it whole — also when OpenCode filled in an earlier message in the meantime
 * (a user message's `summary`), and from an import state saved when exports were digested by
 * their JSON text.
 */
import { assert, describe, it } from "@effect/vitest"
import { SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { DEFAULT_IDLE_WINDOW_MS, importSessions } from "../../src/import/Importer.ts"
import { verifySession } from "../../src/session/Verification.ts"
import { eventsOf, items } from "./support/sessionEvents.ts"

const dir = path.join(
  import.meta.dirname,
  "..",
  "fixtures",
  "realdata",
  "opencode",
  "opencode-export-html__t8v6Igr8"
)
const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)
interface Tokens {
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cache: { readonly read: number; readonly write: number }
}
interface Part {
  readonly type: string
  readonly text?: string
  readonly synthetic?: boolean
  readonly tool?: string
  readonly state?: { readonly input?: { readonly filePath?: string } }
  readonly tokens?: Tokens
}
interface Message {
  readonly info: { readonly role: string; readonly time: { readonly created: number } }
  readonly parts: ReadonlyArray<Part>
}
interface SessionInfo {
  readonly id: string
  readonly time: { readonly created: number }
}
const info: SessionInfo = JSON.parse(fs.readFileSync(path.join(dir, "session.json"), "utf8"))
const messages: ReadonlyArray<Message> = JSON.parse(fs.readFileSync(path.join(dir, "messages.json"), "utf8"))
const session = `opencode-${info.id}`

/** Writes what `opencode export <id>` prints for these objects: `{info, messages}`, two-space indented. */
const writeExport = (file: string, upTo: number = messages.length, from = messages): void =>
  fs.writeFileSync(file, JSON.stringify({ info, messages: from.slice(0, upTo) }, null, 2))

/** The messages as an export taken during the first turn has them: no `summary` on the prompt yet. */
const beforeSummary: ReadonlyArray<Message> = messages.map((m, i) => {
  if (i !== 0) return m
  const { summary: _summary, ...rest } = m.info as Message["info"] & { readonly summary?: unknown }
  return { ...m, info: rest }
})

const run = (sessionsDir: string, format: "opencode" | "auto", paths: ReadonlyArray<string>) =>
  importSessions({ sessionsDir, format, paths }).pipe(Effect.provide(storeLayer))

const settled = (file: string) =>
  Effect.gen(function*() {
    fs.utimesSync(file, 1_700_000_000, 1_700_000_000)
    yield* TestClock.setTime(1_700_000_000_000 + DEFAULT_IDLE_WINDOW_MS)
  })

/**
 * Imports the whole export into one store; into another, the export as `writePart` leaves it while
 * OpenCode still writes it (its mtime inside the idle window: the open turn stays open), then
 * `between` on that store, then the whole export once finished: the second import updates the
 * session, and both logs are byte-identical.
 */
const grownEqualsWhole = (
  writePart: (file: string) => Effect.Effect<void>,
  between: (half: string) => Effect.Effect<void> = () => Effect.void
) =>
  Effect.gen(function*() {
    const whole = yield* tempDir("import-opencode-real-whole")
    const half = yield* tempDir("import-opencode-real-half")
    const src = yield* tempDir("import-opencode-real-src")
    const file = path.join(src, `${info.id}.json`)
    writeExport(file)
    yield* settled(file)
    yield* run(whole, "opencode", [file])
    yield* writePart(file)
    yield* run(half, "opencode", [file])
    yield* between(half)
    writeExport(file)
    yield* settled(file)
    const second = yield* run(half, "opencode", [file])
    assert.strictEqual(second.sessions_updated, 1, JSON.stringify(second.sources))
    assert.strictEqual(
      fs.readFileSync(sessionPaths(half, session).events, "base64"),
      fs.readFileSync(sessionPaths(whole, session).events, "base64")
    )
  })

describe("Importer on a real OpenCode 1.15.7 session", () => {
  it.effect("turns, texts, reasoning, the edit, tokens and times match the source; verify is clean; re-import is byte-identical", () =>
    Effect.gen(function*() {
      const sessions = yield* tempDir("import-opencode-real")
      const src = yield* tempDir("import-opencode-real-src")
      const file = path.join(src, `${info.id}.json`)
      writeExport(file)
      yield* settled(file)
      const report = yield* run(sessions, "opencode", [file])
      assert.deepStrictEqual(report.sources.map((s) => [s.session, s.status]), [[session, "created"]])
      const events = eventsOf(sessions, session)
      const prompts = messages.filter((m) =>
        m.info.role === "user" && m.parts.some((p) => p.type === "text" && p.synthetic !== true)
      )
      assert.strictEqual(prompts.length, 1)
      assert.strictEqual(events.filter((e) => e.type === "turn.started").length, prompts.length)
      const partsOf = (type: string) =>
        messages.flatMap((m) =>
          m.info.role === "assistant" ? m.parts.filter((p) => p.type === type).map((p) => p.text ?? "") : []
        )
      assert.deepStrictEqual(
        items(events).flatMap((i) => i.type === "agent_message" ? [i.text] : []),
        partsOf("text")
      )
      assert.deepStrictEqual(items(events).flatMap((i) => i.type === "reasoning" ? [i.text] : []), partsOf("reasoning"))
      assert.deepStrictEqual(items(events).filter((i) => i.type === "command_execution"), [])
      const written = messages.flatMap((m) => m.parts).filter((p) => p.type === "tool" && p.tool === "write")
      assert.deepStrictEqual(
        items(events).flatMap((i) => i.type === "file_change" ? i.changes.map((c) => [c.path, c.kind]) : []),
        written.map((p) => [p.state?.input?.filePath ?? "", "add"])
      )
      const finishes = messages.flatMap((m) => m.parts).flatMap((p) =>
        p.type === "step-finish" && p.tokens !== undefined ? [p.tokens] : []
      )
      const sum = (f: (t: Tokens) => number) => finishes.reduce((n, t) => n + f(t), 0)
      const completed = events.find((e) => e.type === "thread.completed")
      assert.deepStrictEqual(completed?.type === "thread.completed" ? completed.usage : undefined, {
        input_tokens: sum((t) => t.input),
        cached_input_tokens: sum((t) => t.cache.read),
        cache_creation_tokens: sum((t) => t.cache.write),
        output_tokens: sum((t) => t.output + t.reasoning)
      })
      assert.strictEqual(sum((t) => t.output + t.reasoning), 191)
      const manifest = JSON.parse(fs.readFileSync(sessionPaths(sessions, session).manifest, "utf8"))
      assert.strictEqual(Date.parse(manifest["created_at"]), info.time.created)
      assert.strictEqual(Date.parse(manifest["updated_at"]), messages[messages.length - 1]?.info.time.created)
      const verified = yield* verifySession(sessions, session).pipe(Effect.provide(storeLayer))
      assert.deepStrictEqual(verified.findings, [])
      const before = fs.readFileSync(sessionPaths(sessions, session).events, "base64")
      const again = yield* run(sessions, "auto", [file])
      assert.strictEqual(again.sessions_unchanged, 1, JSON.stringify(again.sources))
      assert.strictEqual(fs.readFileSync(sessionPaths(sessions, session).events, "base64"), before)
    }))

  it.effect("an export that gained its last message imports only it: the same log as importing it whole", () =>
    grownEqualsWhole((file) => Effect.sync(() => writeExport(file, messages.length - 1))))

  it.effect("an earlier message OpenCode filled in since (the prompt's summary) does not refuse the grown export", () =>
    grownEqualsWhole((file) =>
      Effect.sync(() => {
        assert.notDeepEqual(beforeSummary[0], messages[0])
        writeExport(file, messages.length - 1, beforeSummary)
      })
    ))

  it.effect("an import state saved when exports were digested by their JSON text is still taken up", () =>
    grownEqualsWhole(
      (file) => Effect.sync(() => writeExport(file, messages.length - 1)),
      (half) =>
        Effect.sync(() => {
          // What the state of that earlier version held: the digest of the messages' JSON text.
          const stateFile = sessionPaths(half, session).importState
          const state = JSON.parse(fs.readFileSync(stateFile, "utf8"))
          const former = createHash("sha256")
          for (const m of messages.slice(0, messages.length - 1)) former.update(JSON.stringify(m))
          fs.writeFileSync(stateFile, JSON.stringify({ ...state, prefix_sha256: former.digest("hex") }))
        })
    ))
})
