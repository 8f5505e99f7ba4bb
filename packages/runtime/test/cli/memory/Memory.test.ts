/**
 * `logbook memory write|derive`, `logbook facts` and `logbook search` in-process, and the
 * `SessionMemory` layer deriving a memory view on close unless the host wrote its own.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionMemory, storeLayerNode } from "../../../src/SessionMemory.ts"
import { logbook } from "../inProcess.ts"

const run = (args: ReadonlyArray<string>, input?: string) =>
  Effect.map(logbook(args, input === undefined ? {} : { input }), (r) => {
    assert.strictEqual(r.exitCode, 0, r.stderr)
    return r.stdout
  })

const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }

/** Records session `id` with one turn per message through the host layer. */
const record = (workspace: string, id: string, messages: ReadonlyArray<string>, hostView?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const memory = yield* SessionMemory
    for (const text of messages) {
      yield* memory.append({ type: "turn.started" })
      yield* memory.append({ type: "item.completed", item: { id: "m", type: "agent_message", text } })
      yield* memory.append({ type: "turn.completed", usage })
    }
    if (hostView !== undefined) {
      yield* memory.writeMemoryView({
        summary: "host summary",
        task_summary: null,
        spec_summary: null,
        evaluation_summary: null,
        touched_files: [],
        grounded_facts: hostView.map((fact) => ({ fact, source: "host" })),
        history_artifact_path: null,
        generated_at: "2026-01-01T00:00:00Z"
      })
    }
  }).pipe(
    Effect.provide(SessionMemory.layer({ workspace, sessionId: id, retention: false })),
    Effect.provide(storeLayerNode)
  )

const viewOf = (workspace: string, id: string) =>
  JSON.parse(fs.readFileSync(path.join(workspace, ".logbook", "sessions", id, "derived", "memory.json"), "utf8"))

describe("memory views and search from the CLI", () => {
  it.effect("a closing session derives its memory view, unless the host wrote one", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("memory-cli")
      yield* record(workspace, "plain", ["Fixed the websocket reconnect"])
      assert.strictEqual(viewOf(workspace, "plain").origin, "derived")
      assert.strictEqual(viewOf(workspace, "plain").grounded_facts[0].fact, "Fixed the websocket reconnect")
      yield* record(workspace, "hosted", ["internal chatter"], ["the host's own fact"])
      const hosted = viewOf(workspace, "hosted")
      assert.isUndefined(hosted.origin)
      assert.deepStrictEqual(hosted.grounded_facts.map((f: { fact: string }) => f.fact), ["the host's own fact"])
    }))

  it.effect("facts --session drops empty facts, and a corrupt view is an error naming the file (exit 5)", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("memory-cli")
      yield* record(workspace, "gaps", ["x"], ["a", "", "  ", "b"])
      const json = JSON.parse(yield* run(["--workspace", workspace, "facts", "--session", "gaps", "--json"]))
      assert.deepStrictEqual(json.map((f: { fact: string }) => f.fact), ["a", "b"])
      const view = path.join(workspace, ".logbook", "sessions", "gaps", "derived", "memory.json")
      fs.writeFileSync(view, "{ not json")
      const r = yield* logbook(["--workspace", workspace, "facts", "--session", "gaps"])
      assert.strictEqual(r.exitCode, 5, r.stderr)
      assert.include(r.stderr, view)
      assert.include(r.stderr, "corrupt")
      assert.strictEqual(r.stdout, "")
    }))

  it.effect("facts and search list and rank the facts; --json prints the result records", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("memory-cli")
      yield* record(workspace, "a", ["Fixed the websocket reconnect", "Updated the changelog"])
      yield* record(workspace, "b", ["Websocket tests are green"])
      const facts = yield* run(["--workspace", workspace, "facts"])
      assert.strictEqual(facts.trim().split("\n")[0], "a  Fixed the websocket reconnect")
      const json = JSON.parse(yield* run(["--workspace", workspace, "facts", "--session", "b", "--json"]))
      assert.deepStrictEqual(json, [{ fact: "Websocket tests are green", session_id: "b" }])
      yield* record(workspace, "quiet", ["OK"])
      assert.include(yield* run(["--workspace", workspace, "facts", "--session", "quiet"]), "No facts for quiet")
      const results = JSON.parse(
        yield* run(["--workspace", workspace, "search", "websocket reconnect", "--json", "--now", "0"])
      )
      assert.strictEqual(results[0].chunk_id, "a:0")
      for (const key of ["chunk_id", "path", "start_line", "end_line", "score", "snippet", "source", "created_at"]) {
        assert.property(results[0], key)
      }
      const text = yield* run(["--workspace", workspace, "search", "websocket", "--max", "1"])
      assert.match(text, /^\d+\.\d{3} {2}(a|b):0 {2}/u)
      assert.strictEqual(text.trim().split("\n").length, 1)
      const none = yield* run(["--workspace", workspace, "search", "?!"])
      assert.include(none, "No words to search for")
      const history = yield* run(["--workspace", workspace, "search", "changelog", "--in", "history"])
      assert.match(history, /a turn 2 {2}Updated the changelog/u)
      assert.include(history, `Open a turn with: logbook --workspace ${workspace} turn a 2`)
      const hjson = JSON.parse(
        yield* run(["--workspace", workspace, "search", "changelog", "--in", "history", "--json"])
      )
      assert.strictEqual(hjson[0].turn, 2)
      assert.isNumber(hjson[0].offset)
      // The shared vocabulary (--scope, --limit) and the older spellings (--in, --max) are one flag each.
      const spelled = yield* run([
        "--workspace",
        workspace,
        "search",
        "changelog",
        "--scope",
        "history",
        "--limit",
        "1"
      ])
      const aliased = yield* run(["--workspace", workspace, "search", "changelog", "--in", "history", "--max", "1"])
      assert.strictEqual(spelled, aliased)
      assert.match(spelled, /a turn 2 {2}Updated the changelog/u)
    }))

  it.effect(
    "facts --limit 200000 prints every fact of a large view without overflowing the stack",
    () =>
      Effect.gen(function*() {
        const workspace = yield* tempDir("memory-cli")
        const many = Array.from({ length: 200_000 }, (_, i) => `fact ${i}`)
        yield* record(workspace, "big", ["one turn"], many)
        const r = yield* logbook(["--workspace", workspace, "facts", "--limit", "200000"])
        assert.strictEqual(r.exitCode, 0, r.stderr.slice(0, 2000))
        const lines = r.stdout.split("\n")
        assert.strictEqual(lines.length, 200_001)
        assert.strictEqual(lines[0], "big  fact 0")
        assert.strictEqual(lines[199_999], "big  fact 199999")
      }),
    { timeout: 120_000 }
  )

  it.effect("memory write validates stdin and is idempotent; derive keeps the host view", () =>
    Effect.gen(function*() {
      const workspace = yield* tempDir("memory-cli")
      yield* record(workspace, "s", ["Derived fact"])
      const view = JSON.stringify({
        summary: "host",
        task_summary: null,
        spec_summary: null,
        evaluation_summary: null,
        touched_files: ["src/a.ts"],
        grounded_facts: [{ fact: "host fact", source: "host" }],
        history_artifact_path: null,
        generated_at: "2026-01-01T00:00:00Z"
      })
      assert.include(yield* run(["--workspace", workspace, "memory", "write", "s"], view), "wrote ")
      assert.include(yield* run(["--workspace", workspace, "memory", "write", "s"], view), "unchanged")
      assert.include(yield* run(["--workspace", workspace, "memory", "derive", "s"]), "kept ")
      assert.strictEqual(viewOf(workspace, "s").grounded_facts[0].fact, "host fact")
      const bad = yield* logbook(["--workspace", workspace, "memory", "write", "s"], { input: "{\"summary\":1}" })
      assert.strictEqual(bad.exitCode, 1)
      assert.include(bad.stderr, "the memory view on stdin is invalid")
      const missing = yield* logbook(["--workspace", workspace, "memory", "derive", "ghost"])
      assert.strictEqual(missing.exitCode, 3)
      fs.writeFileSync(path.join(workspace, ".logbook", "sessions", "s", "derived", "memory.json"), "{broken")
      const corrupt = yield* logbook(["--workspace", workspace, "memory", "derive", "s"])
      assert.strictEqual(corrupt.exitCode, 5)
      assert.include(corrupt.stderr, "memory.json is corrupt")
    }))
})
