/**
 * `logbook explain` and `logbook evidence` in-process on the demo session: the summary's five
 * sections, JSON, the HTML file, the diagram width, an evidence link that resolves and one that
 * does not (exit 3), and output flags that exclude each other (exit 2); and on a real Codex
 * rollout imported from the fixtures: the request as the goal, the recorded commands counted.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { logbook } from "../inProcess.ts"

const codexDir = path.join(
  import.meta.dirname,
  "..",
  "..",
  "..",
  "..",
  "projections",
  "test",
  "fixtures",
  "realdata",
  "codex-rollout"
)
const codexSession = "codex-019982b8-3422-79e0-8b3b-05abaf4f3c3e"

const demo = Effect.gen(function*() {
  const workspace = yield* tempDir("explain-cli")
  const r = yield* logbook(["--workspace", workspace, "demo", "--session", "demo"])
  assert.strictEqual(r.exitCode, 0, r.stderr)
  return workspace
})

const run = (workspace: string, args: ReadonlyArray<string>) =>
  Effect.map(logbook(["--workspace", workspace, ...args]), (r) => {
    assert.strictEqual(r.exitCode, 0, r.stderr)
    return r.stdout
  })

describe("logbook explain", () => {
  it.effect("summarises the demo session in the five sections with evidence links", () =>
    Effect.gen(function*() {
      const ws = yield* demo
      const text = yield* run(ws, ["explain", "demo"])
      for (const s of ["## Goal", "## Changes", "## Decisions", "## Verification", "## Review first"]) {
        assert.include(text, s)
      }
      assert.include(text, "logbook-evidence:demo:")
      assert.include(text, "Inject the random source")
      assert.isAtMost(text.trimEnd().split("\n").length, 20)
      const diagram = yield* run(ws, ["explain", "demo", "--diagram", "--width", "30"])
      for (const row of diagram.trimEnd().split("\n")) assert.isAtMost([...row].length, 30)
      const details = yield* run(ws, ["explain", "demo", "--scope", "session", "--details"])
      assert.include(details, "Verification (")
    }), 120_000)

  it.effect(
    "on a terminal the summary is plain text whose short references `logbook evidence` accepts",
    () =>
      Effect.gen(function*() {
        const ws = yield* demo
        const tty = yield* logbook(["--workspace", ws, "explain", "demo"], { terminal: true })
        assert.strictEqual(tty.exitCode, 0, tty.stderr)
        const text = tty.stdout
        for (const s of ["Goal:", "Changes:", "Decisions:", "Verification:", "Review first:"]) assert.include(text, s)
        assert.notInclude(text, "## ")
        assert.notInclude(text, "logbook-evidence:")
        assert.notMatch(text, /\\[.\-_`*]/u)
        assert.strictEqual(yield* run(ws, ["explain", "demo", "--format", "text"]), text)
        const ref = /@(\d+):([0-9a-f]{12})\b/u.exec(text)
        assert.isNotNull(ref)
        const shown = yield* run(ws, ["evidence", "demo", ref?.[1] ?? "", ref?.[2] ?? ""])
        assert.include(shown, "\"type\"")
        const tooShort = yield* logbook([
          "--workspace",
          ws,
          "evidence",
          "demo",
          ref?.[1] ?? "",
          (ref?.[2] ?? "").slice(0, 8)
        ])
        assert.strictEqual(tooShort.exitCode, 3)
        // Markdown stays what it was, on a terminal too when asked for.
        const md = yield* logbook(["--workspace", ws, "explain", "demo", "--format", "markdown"], { terminal: true })
        assert.strictEqual(md.stdout, yield* run(ws, ["explain", "demo"]))
        assert.include(md.stdout, "## Goal")
        const both = yield* logbook(["--workspace", ws, "explain", "demo", "--format", "text", "--json"])
        assert.strictEqual(both.exitCode, 2)
      }),
    120_000
  )

  it.effect(
    "JSON evidence links resolve with `logbook evidence`; a changed digest is not found",
    () =>
      Effect.gen(function*() {
        const ws = yield* demo
        const model = JSON.parse(yield* run(ws, ["explain", "demo", "--json"]))
        const ref = model.goals[0].evidence
        const line = yield* run(ws, ["evidence", "demo", String(ref.offset), ref.digest])
        assert.include(line, "\"turn.started\"")
        const bad = yield* logbook(["--workspace", ws, "evidence", "demo", String(ref.offset), "0".repeat(64)])
        assert.strictEqual(bad.exitCode, 3)
        assert.include(bad.stderr, "unavailable, malformed, or expired")
      }),
    120_000
  )

  it.effect("writes a self-contained HTML report and prints its URL with --open", () =>
    Effect.gen(function*() {
      const ws = yield* demo
      const file = path.join(ws, "report.html")
      const out = yield* run(ws, ["explain", "demo", "--html", file, "--open"])
      assert.strictEqual(out.trim(), `file://${file}`)
      const html = fs.readFileSync(file, "utf8")
      assert.include(html, "Content-Security-Policy")
      assert.notInclude(html, "<script")
      // The lines behind the key facts are embedded and linked.
      const goal = /href="#evidence-(\d+)"/u.exec(html)
      assert.isNotNull(goal)
      assert.include(html, `id="evidence-${goal?.[1]}"`)
      assert.include(html, "&quot;turn.started&quot;")
      assert.strictEqual(fs.statSync(file).mode & 0o777, 0o600)
    }), 120_000)

  it.effect("output forms exclude each other and --open needs --html", () =>
    Effect.gen(function*() {
      const ws = yield* demo
      const both = yield* logbook(["--workspace", ws, "explain", "demo", "--json", "--details"])
      assert.strictEqual(both.exitCode, 2)
      const open = yield* logbook(["--workspace", ws, "explain", "demo", "--open"])
      assert.strictEqual(open.exitCode, 2)
      const bare = yield* logbook(["--workspace", ws, "explain", "demo", "--with-workspace"])
      assert.strictEqual(bare.exitCode, 2)
      assert.include(bare.stderr, "--with-workspace needs --html FILE")
      const file = path.join(ws, "with-workspace.html")
      yield* run(ws, ["explain", "demo", "--html", file, "--with-workspace"])
      assert.include(fs.readFileSync(file, "utf8"), "Current workspace (not evidence)")
      const missing = yield* logbook(["--workspace", ws, "explain", "nope"])
      assert.strictEqual(missing.exitCode, 3)
    }), 120_000)

  it.effect(
    "an imported Codex rollout is summarised by its request (not the IDE context) and its 34 commands",
    () =>
      Effect.gen(function*() {
        const root = yield* tempDir("explain-codex")
        const imported = yield* logbook(["--sessions-dir", root, "import", "codex", codexDir])
        assert.strictEqual(imported.exitCode, 0, imported.stderr)
        const r = yield* logbook(["--sessions-dir", root, "explain", codexSession])
        assert.strictEqual(r.exitCode, 0, r.stderr)
        const lines = r.stdout.trimEnd().split("\n")
        assert.isAtMost(lines.length, 20)
        const goal = lines[lines.indexOf("## Goal") + 1] ?? ""
        assert.match(goal, /^Evaluate @packages\/services and create a new package/u)
        assert.notInclude(r.stdout, "Context from my IDE setup")
        assert.include(
          r.stdout,
          "Actions: 34 recorded, 0 failed; latest: cat packages/services/eslint\\.config\\.js [completed]"
        )
        const details = yield* logbook(["--sessions-dir", root, "explain", codexSession, "--details"])
        assert.include(details.stdout, "Actions (34)")
      }),
    120_000
  )
})
