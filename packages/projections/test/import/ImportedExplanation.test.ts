/**
 * Explanations of the real sessions in `test/fixtures/realdata` (PROVENANCE.md there), imported
 * and then explained: the verification list holds every test/lint/type-check/build command the
 * source ran, each with the exit code the source recorded; the changed files are the distinct
 * paths of the source's successful edits; every edit whose source carries old/new text has a
 * complete diff. The expectations are read from the source files here, independently of the
 * importers (only the classifier is shared: it has its own table test).
 */
import { assert, describe, it } from "@effect/vitest"
import { claudeText, isClaudePrompt, isVerificationCommand } from "@logbook/domain"
import { SessionFs, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer, Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { queryExplanation, queryTranscript } from "../../src/explain/Explanation.ts"
import { escapeHtml, renderHtml } from "../../src/explain/render/ExplanationHtml.ts"
import { importSessions } from "../../src/import/Importer.ts"
import { eventsOf } from "./support/sessionEvents.ts"

const fixtures = path.join(import.meta.dirname, "..", "fixtures", "realdata")
const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

type Json = Record<string, unknown>

/** What a source file says it did: its checks with their exit codes, and the paths it edited. */
interface SourceFacts {
  readonly checks: ReadonlyArray<{ readonly command: string; readonly exit: number | null }>
  readonly changed: ReadonlySet<string>
  /** Edits whose source holds the old and new text (a diff is owed for each). */
  readonly editsWithText: number
}

const jsonl = (file: string): Array<Json> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim().length > 0 && !l.startsWith("#")).map((l) =>
    JSON.parse(l)
  )

const asArray = (v: unknown): Array<Json> => Array.isArray(v) ? v : []
const asObj = (v: unknown): Json => typeof v === "object" && v !== null && !Array.isArray(v) ? v as Json : {}

const claudeFacts = (file: string): SourceFacts => {
  const records = jsonl(file)
  const uses = new Map<string, Json>()
  const checks: Array<{ command: string; exit: number | null }> = []
  const changed = new Set<string>()
  let editsWithText = 0
  for (const r of records) {
    for (const block of asArray(asObj(r["message"])["content"])) {
      if (block["type"] === "tool_use") uses.set(String(block["id"]), block)
      if (block["type"] !== "tool_result") continue
      const use = uses.get(String(block["tool_use_id"]))
      if (use === undefined) continue
      const input = asObj(use["input"])
      const failed = block["is_error"] === true
      if (use["name"] === "Bash" && isVerificationCommand(String(input["command"]))) {
        // Claude Code records no exit code field: a result is exit 0 unless is_error, whose text
        // starts "Exit code N" when the command ran (a denied call has none).
        const text = typeof block["content"] === "string" ? block["content"] : JSON.stringify(block["content"])
        const code = /^Exit code (\d+)/u.exec(text)
        checks.push({ command: String(input["command"]), exit: failed ? (code === null ? null : Number(code[1])) : 0 })
      }
      if (["Edit", "MultiEdit", "Write", "NotebookEdit"].includes(String(use["name"])) && !failed) {
        changed.add(String(input["file_path"] ?? input["notebook_path"]))
        if (use["name"] === "Edit" && typeof input["old_string"] === "string") editsWithText++
      }
    }
  }
  return { checks, changed, editsWithText }
}

const codexShellCommand = (args: Json): string => {
  const command = args["command"]
  if (Array.isArray(command) && command.length === 3 && /sh$/u.test(String(command[0]))) return String(command[2])
  return Array.isArray(command) ? command.join(" ") : String(command ?? args["cmd"] ?? "")
}

const codexRolloutFacts = (file: string): SourceFacts => {
  const calls = new Map<string, string>()
  const checks: Array<{ command: string; exit: number | null }> = []
  const changed = new Set<string>()
  for (const r of jsonl(file)) {
    const p = asObj(r["payload"])
    if (r["type"] !== "response_item") continue
    if (p["type"] === "function_call" && ["shell", "exec_command", "shell_command"].includes(String(p["name"]))) {
      const parsed = (() => {
        const parsed = Result.try(() => asObj(JSON.parse(String(p["arguments"]))))
        return Result.isSuccess(parsed) ? parsed.success : {}
      })()
      calls.set(String(p["call_id"]), codexShellCommand(parsed))
    }
    if (p["type"] === "function_call_output") {
      const command = calls.get(String(p["call_id"]))
      if (command === undefined || !isVerificationCommand(command)) continue
      const parsed = Result.try(() => asObj(JSON.parse(String(p["output"]))))
      const exit = Result.isSuccess(parsed) ? asObj(parsed.success["metadata"])["exit_code"] : undefined
      checks.push({ command, exit: typeof exit === "number" ? exit : null })
    }
    if (p["type"] === "custom_tool_call" && p["name"] === "apply_patch") {
      for (const m of String(p["input"]).matchAll(/^\*\*\* (?:Add|Update) File: (.+)$/gmu)) changed.add(m[1] ?? "")
    }
  }
  return { checks, changed, editsWithText: 0 }
}

const codexExecFacts = (file: string): SourceFacts => {
  const checks: Array<{ command: string; exit: number | null }> = []
  const changed = new Set<string>()
  for (const r of jsonl(file)) {
    if (r["type"] !== "item.completed") continue
    const item = asObj(r["item"])
    if (item["type"] === "command_execution" && isVerificationCommand(String(item["command"]))) {
      checks.push({
        command: String(item["command"]),
        exit: typeof item["exit_code"] === "number" ? item["exit_code"] : null
      })
    }
    if (item["type"] === "file_change" && item["status"] === "completed") {
      for (const c of asArray(item["changes"])) if (c["kind"] !== "delete") changed.add(String(c["path"]))
    }
  }
  return { checks, changed, editsWithText: 0 }
}

const geminiFacts = (file: string): SourceFacts => {
  const text = fs.readFileSync(file, "utf8")
  const messages = file.endsWith(".json") ? asArray(asObj(JSON.parse(text))["messages"]) : jsonl(file)
  const checks: Array<{ command: string; exit: number | null }> = []
  const changed = new Set<string>()
  let editsWithText = 0
  for (const m of messages) {
    for (const call of asArray(m["toolCalls"])) {
      const args = asObj(call["args"])
      const ok = call["status"] === "success"
      const output = asArray(call["result"]).map((r) =>
        String(asObj(asObj(r["functionResponse"])["response"])["output"] ?? "")
      ).join("\n")
      if (call["name"] === "run_shell_command" && isVerificationCommand(String(args["command"]))) {
        const exit = /^Exit Code: (\d+)$/mu.exec(output)
        checks.push({ command: String(args["command"]), exit: exit === null ? null : Number(exit[1]) })
      }
      if (["replace", "write_file", "edit"].includes(String(call["name"])) && ok) {
        changed.add(String(args["file_path"] ?? args["absolute_path"]))
        if (typeof args["old_string"] === "string") editsWithText++
      }
    }
  }
  return { checks, changed, editsWithText }
}

const cases: ReadonlyArray<
  {
    readonly dir: string
    readonly format: "codex" | "claude" | "gemini" | "exec"
    readonly facts: (f: string) => SourceFacts
  }
> = [
  { dir: "claude-code", format: "claude", facts: claudeFacts },
  { dir: "claude-code-checks", format: "claude", facts: claudeFacts },
  { dir: "codex-rollout", format: "codex", facts: codexRolloutFacts },
  { dir: "codex-exec-json", format: "exec", facts: codexExecFacts },
  { dir: "gemini-cli", format: "gemini", facts: geminiFacts }
]

describe("explanations of imported real sessions", () => {
  for (const { dir, facts, format } of cases) {
    for (const name of fs.readdirSync(path.join(fixtures, dir)).sort()) {
      const file = path.join(fixtures, dir, name)
      it.effect(`${dir}/${name}: every check with its exit code, the edited paths, a diff for every edit`, () =>
        Effect.gen(function*() {
          const source = facts(file)
          const sessionsDir = yield* tempDir("explain-import")
          const report = yield* importSessions({ sessionsDir, format, paths: [file] })
          const session = report.sources[0]?.session
          assert.isDefined(session, JSON.stringify(report.sources))
          const model = yield* queryExplanation(sessionsDir, session ?? "", "session")
          assert.deepStrictEqual(
            model.verification.map((v) => [v.fact.label, v.exit_code]),
            source.checks.map((c) => [c.command, c.exit])
          )
          assert.deepStrictEqual(new Set(model.changes.map((c) => c.path)), new Set<string | null>(source.changed))
          const diffs = eventsOf(sessionsDir, session ?? "").flatMap((e) =>
            e.type === "item.completed" && e.item.type === "file_change" && e.item.status === "completed" &&
              e.item.unified_diff !== undefined && e.item.diff_incomplete !== true
              ? [e.item]
              : []
          )
          assert.isAtLeast(diffs.length, source.editsWithText)
          if (source.editsWithText > 0 && diffs.length === model.edit_operations) {
            assert.isFalse(model.completeness.warnings.some((w) => w.includes("diff unavailable")))
          }
          if (source.checks.length > 0 && source.checks.every((c) => c.exit === 0)) {
            // The last edit of each of these sessions is followed by a passing check.
            assert.isFalse(model.review_priorities.some((r) => r.reason.includes("No passing verification")))
          }
        }).pipe(Effect.provide(storeLayer)))
    }
  }
})

describe("a real session that failed its lint twice before passing", () => {
  const file = path.join(fixtures, "claude-code-checks", "entire-cli__2.1.31__ckpt-b703660e28ea__lint-failures.jsonl")

  it.effect("lists the denied and failing checks as failed, and the final passing ones as fresh", () =>
    Effect.gen(function*() {
      const sessionsDir = yield* tempDir("explain-lint")
      const report = yield* importSessions({ sessionsDir, format: "claude", paths: [file] })
      const model = yield* queryExplanation(sessionsDir, report.sources[0]?.session ?? "", "session")
      assert.deepStrictEqual(model.verification.map((v) => v.status), [
        "passed",
        "passed",
        "passed",
        "failed",
        "failed",
        "failed",
        "passed",
        "passed"
      ])
      assert.deepStrictEqual(model.verification.slice(-2).map((v) => v.fresh), [true, true])
      assert.isFalse(model.review_priorities.some((r) => r.reason.includes("No passing verification")))
      assert.isFalse(model.completeness.warnings.some((w) => w.includes("diff unavailable")))
      assert.strictEqual(model.edit_operations, 9)
    }).pipe(Effect.provide(storeLayer)))
})

describe("the HTML report of an imported real session", () => {
  const file = path.join(fixtures, "claude-code", "entire-cli__2.0.76__ckpt-a6e4c2a0fbd1__compact_boundary.jsonl")

  it.effect("shows every prompt and every command of the source, and evidence links land on transcript entries", () =>
    Effect.gen(function*() {
      const sessionsDir = yield* tempDir("explain-html")
      const report = yield* importSessions({ sessionsDir, format: "claude", paths: [file] })
      const session = report.sources[0]?.session ?? ""
      const model = yield* queryExplanation(sessionsDir, session, "session")
      const transcript = yield* queryTranscript(sessionsDir, session)
      const html = renderHtml(model, { transcript })
      const records = jsonl(file)
      const prompts = records.filter(isClaudePrompt).map((r) => claudeText(asObj(r["message"])["content"]))
      assert.isAbove(prompts.length, 0)
      for (const prompt of prompts) assert.include(html, escapeHtml(prompt.slice(0, 200)))
      assert.strictEqual(html.split("data-kind=\"prompt\"").length - 1, prompts.length)
      const commands = records.flatMap((r) =>
        asArray(asObj(r["message"])["content"]).flatMap((b) =>
          b["type"] === "tool_use" && b["name"] === "Bash" ? [String(asObj(b["input"])["command"])] : []
        )
      )
      for (const command of commands) assert.include(html, `<code>$ ${escapeHtml(command)}</code>`)
      // Every evidence link into the transcript names an anchor the report has.
      const targets = [...html.matchAll(/href="#entry-(\d+)"/gu)].map((m) => m[1])
      assert.isAtLeast(targets.length, model.verification.length)
      for (const t of targets) assert.include(html, `id="entry-${t}"`)
      assert.include(html, "<nav class=\"toc\" aria-label=\"Turns\">")
      assert.notInclude(html, "<script")
    }).pipe(Effect.provide(storeLayer)))
})
