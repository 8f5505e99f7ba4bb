/**
 * The tool-call evidence the importers carry over, on hand-made records shaped like the real
 * formats for what the real fixtures lack: failed and interrupted Claude Code `Bash` results,
 * `Write` of a new file, edits without a structured patch, Codex `apply_patch` bodies with
 * several files and a move, Gemini shell exit codes, and the diffs the explanation reads back.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent, ThreadItem } from "@logbook/domain"
import { claudeTranscriptMapper, codexRolloutMapper, geminiSessionMapper } from "@logbook/domain"
import { createHash } from "node:crypto"
import { encodeLine } from "../../src/contract/Encode.ts"
import type { ExplanationRecord } from "../../src/explain/Explanation.ts"
import { makeExplanationFold } from "../../src/explain/Explanation.ts"
import type { ImportMapper } from "../../src/import/ImportCursor.ts"
import {
  applyPatchDiff,
  creationDiff,
  diffFields,
  exitCodeInText,
  MAX_IMPORTED_DIFF_CHARS,
  replacementDiff,
  searchReplaceDiff,
  structuredPatchDiff
} from "../../src/import/internal/toolEvidence.ts"

const run = <S>(mapper: ImportMapper<S>, sessionId: string, records: ReadonlyArray<unknown>): Array<ThreadEvent> => {
  let state = mapper.initial({ sessionId, threadId: sessionId })
  const out: Array<ThreadEvent> = []
  for (const record of records) {
    const step = mapper.step(state, record)
    state = step.state
    out.push(...step.events)
  }
  return out
}

/** The records of events as they would sit in events.jsonl. */
const recordsOf = (out: ReadonlyArray<ThreadEvent>): Array<ExplanationRecord> => {
  let offset = 0
  return out.map((event) => {
    const bytes = Buffer.from(`${encodeLine(event)}\n`)
    const parsed: unknown = JSON.parse(bytes.toString("utf8"))
    const record: ExplanationRecord = {
      offset,
      length: bytes.length,
      digest: () => createHash("sha256").update(bytes).digest("hex"),
      event: typeof parsed === "object" && parsed !== null && "event" in parsed &&
          typeof parsed.event === "object" && parsed.event !== null
        ? { ...parsed.event }
        : undefined
    }
    offset += bytes.length
    return record
  })
}

const completed = (out: ReadonlyArray<ThreadEvent>): Array<ThreadItem> =>
  out.flatMap((e) => e.type === "item.completed" ? [e.item] : [])

const ts = "2026-01-01T00:00:00.000Z"
const claudeUser = (content: unknown, extra: Record<string, unknown> = {}) => ({
  type: "user",
  sessionId: "s",
  timestamp: ts,
  message: { role: "user", content },
  ...extra
})
const claudeTool = (id: string, name: string, input: Record<string, unknown>) => ({
  type: "assistant",
  sessionId: "s",
  timestamp: ts,
  message: { id: `m-${id}`, role: "assistant", content: [{ type: "tool_use", id, name, input }] }
})
const claudeResult = (id: string, content: string, isError: boolean, toolUseResult: unknown) =>
  claudeUser([{ type: "tool_result", tool_use_id: id, content, is_error: isError }], { toolUseResult })

describe("diffs built from what the sources record", () => {
  it("an old/new replacement keeps the common lines as context under a bare hunk header", () => {
    assert.strictEqual(
      replacementDiff("src/a.go", "a\nb\nc\n", "a\nB\nc\n"),
      "--- a/src/a.go\n+++ b/src/a.go\n@@\n a\n-b\n+B\n c\n"
    )
    assert.strictEqual(creationDiff("n.txt", "x\ny\n"), "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n")
  })

  it("a Claude structuredPatch keeps its line numbers; a malformed one is no diff", () => {
    const patch = [{ oldStart: 10, oldLines: 2, newStart: 10, newLines: 2, lines: [" a", "-b", "+c"] }]
    assert.strictEqual(structuredPatchDiff("x.ts", patch), "--- a/x.ts\n+++ b/x.ts\n@@ -10,2 +10,2 @@\n a\n-b\n+c\n")
    assert.isUndefined(structuredPatchDiff("x.ts", [{ lines: "no" }]))
    assert.isUndefined(structuredPatchDiff("x.ts", []))
  })

  it("an apply_patch body becomes one header per file, an added file from line 1, a move under its new name", () => {
    const patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n+y\n*** Update File: src/b.ts\n*** Move to: src/c.ts\n" +
      "@@ function f\n-old\n+new\n*** Delete File: gone.txt\n*** End Patch"
    assert.strictEqual(
      applyPatchDiff(patch),
      "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n" +
        "--- a/src/b.ts\n+++ b/src/c.ts\n@@ function f\n-old\n+new\n" +
        "--- a/gone.txt\n+++ /dev/null\n"
    )
  })

  it("a diff longer than the limit is cut at a line and marked incomplete", () => {
    const long = "+x\n".repeat(MAX_IMPORTED_DIFF_CHARS)
    const fields = diffFields(long)
    assert.isTrue(fields.diff_incomplete)
    assert.isAtMost(fields.unified_diff?.length ?? 0, MAX_IMPORTED_DIFF_CHARS)
    assert.isTrue(fields.unified_diff?.endsWith("\n"))
    assert.deepStrictEqual(diffFields(""), {})
  })

  it("exit codes are read from the lines the formats write", () => {
    assert.strictEqual(exitCodeInText("Command: x\nOutput: y\nError: (none)\nExit Code: 127\nSignal: 0"), 127)
    assert.strictEqual(exitCodeInText("Exit code 2\nnpm ERR!"), 2)
    assert.strictEqual(exitCodeInText("Exit code: 0\nWall time: 0.1 seconds"), 0)
    assert.strictEqual(exitCodeInText("Chunk ID: 1\nProcess exited with code 1\nOutput:"), 1)
    assert.isUndefined(exitCodeInText("the tests printed Exit code 3 somewhere inside a line"))
    assert.isUndefined(exitCodeInText("Exit Code: (none)"))
  })
})

describe("Claude Code tool results", () => {
  const session = (records: ReadonlyArray<unknown>) =>
    completed(run(claudeTranscriptMapper, "claude-s", [claudeUser("fix it"), ...records]))

  it("a Bash result is exit 0 unless is_error or interrupted; checks are labelled verification", () => {
    const out = session([
      claudeTool("t1", "Bash", { command: "go test ./..." }),
      claudeResult("t1", "ok", false, { stdout: "ok", stderr: "", interrupted: false }),
      claudeTool("t2", "Bash", { command: "npm test" }),
      claudeResult("t2", "Exit code 1\nfailing", true, "Error: Exit code 1"),
      claudeTool("t3", "Bash", { command: "make test" }),
      claudeResult("t3", "", false, { stdout: "", stderr: "", interrupted: true }),
      claudeTool("t4", "Bash", { command: "npm run dev", run_in_background: true }),
      claudeResult("t4", "Command running in background with ID: b1", false, { stdout: "", interrupted: false }),
      claudeTool("t5", "Bash", { command: "ls" }),
      claudeResult("t5", "a", false, { stdout: "a", stderr: "", interrupted: false })
    ])
    const commands = out.flatMap((i) => i.type === "command_execution" ? [i] : [])
    assert.deepStrictEqual(
      commands.map((c) => [c.command, c.status, c.exit_code, c.context?.activity]),
      [
        ["go test ./...", "completed", 0, "verification"],
        ["npm test", "failed", 1, "verification"],
        ["make test", "failed", undefined, "verification"],
        ["npm run dev", "completed", undefined, undefined],
        ["ls", "completed", 0, undefined]
      ]
    )
  })

  it("edits carry the structured patch, else their old/new strings; a new file is its content", () => {
    const out = session([
      claudeTool("e1", "Edit", { file_path: "/r/a.go", old_string: "x := 1", new_string: "x := 2" }),
      claudeResult("e1", "ok", false, {
        filePath: "/r/a.go",
        structuredPatch: [{ oldStart: 7, oldLines: 1, newStart: 7, newLines: 1, lines: ["-x := 1", "+x := 2"] }]
      }),
      claudeTool("e2", "Edit", { file_path: "/r/b.go", old_string: "a", new_string: "b" }),
      claudeResult("e2", "ok", false, undefined),
      claudeTool("e3", "Write", { file_path: "/r/new.txt", content: "hello\n" }),
      claudeResult("e3", "ok", false, { type: "create", filePath: "/r/new.txt", content: "hello\n" }),
      claudeTool("e4", "MultiEdit", {
        file_path: "/r/c.go",
        edits: [{ old_string: "p", new_string: "q" }, { old_string: "r", new_string: "s" }]
      }),
      claudeResult("e4", "ok", false, undefined),
      claudeTool("e5", "Edit", { file_path: "/r/d.go", old_string: "a", new_string: "b" }),
      claudeResult("e5", "String not found", true, "Error")
    ])
    const changes = out.flatMap((i) => i.type === "file_change" ? [i] : [])
    assert.deepStrictEqual(changes.map((c) => [c.changes[0]?.path, c.changes[0]?.kind, c.status]), [
      ["/r/a.go", "update", "completed"],
      ["/r/b.go", "update", "completed"],
      ["/r/new.txt", "add", "completed"],
      ["/r/c.go", "update", "completed"],
      ["/r/d.go", "update", "failed"]
    ])
    assert.include(changes[0]?.unified_diff ?? "", "@@ -7,1 +7,1 @@\n-x := 1\n+x := 2\n")
    assert.strictEqual(changes[1]?.unified_diff, "--- a/r/b.go\n+++ b/r/b.go\n@@\n-a\n+b\n")
    assert.strictEqual(changes[2]?.unified_diff, creationDiff("/r/new.txt", "hello\n"))
    assert.strictEqual((changes[3]?.unified_diff ?? "").split("@@\n").length, 3)
    assert.isUndefined(changes[4]?.unified_diff)
    assert.isTrue(changes.every((c) => c.diff_incomplete !== true))
  })
})

describe("Gemini CLI and Codex tool calls", () => {
  it("a Gemini shell command takes the exit code its output ends with; replace and write_file carry diffs", () => {
    const shell = (command: string, code: number) => ({
      name: "run_shell_command",
      status: "success",
      args: { command },
      result: [{
        functionResponse: { response: { output: `Command: ${command}\nOutput: x\nError: (none)\nExit Code: ${code}` } }
      }]
    })
    const out = completed(run(geminiSessionMapper, "gemini-g", [
      { sessionId: "g", projectHash: "h", startTime: ts },
      { id: "u", type: "user", timestamp: ts, content: "go" },
      {
        id: "m",
        type: "gemini",
        timestamp: ts,
        content: "",
        toolCalls: [
          shell("pytest -q", 1),
          shell("pytest -q", 0),
          {
            name: "replace",
            status: "success",
            args: { file_path: "/p/a.py", old_string: "x = 1", new_string: "x = 2" },
            result: [{ functionResponse: { response: { output: "Successfully modified file" } } }]
          },
          {
            name: "write_file",
            status: "success",
            args: { file_path: "/p/a.py", content: "y\n" },
            result: [{ functionResponse: { response: { output: "Successfully overwrote file: /p/a.py" } } }]
          }
        ]
      }
    ]))
    const commands = out.flatMap((i) => i.type === "command_execution" ? [i] : [])
    assert.deepStrictEqual(commands.map((c) => [c.status, c.exit_code, c.context?.activity]), [
      ["failed", 1, "verification"],
      ["completed", 0, "verification"]
    ])
    const changes = out.flatMap((i) => i.type === "file_change" ? [i] : [])
    assert.strictEqual(changes[0]?.unified_diff, replacementDiff("/p/a.py", "x = 1", "x = 2"))
    assert.deepStrictEqual([changes[1]?.changes[0]?.kind, changes[1]?.diff_incomplete], ["update", true])
  })

  it("a Codex apply_patch lands as a unified diff the explanation reads line counts from", () => {
    const ev = (type: string, payload: Record<string, unknown>) => ({ timestamp: ts, type, payload })
    const patch = "*** Begin Patch\n*** Update File: src/b.ts\n@@ f()\n-old\n+new\n+more\n*** End Patch"
    const out = run(codexRolloutMapper, "codex-t", [
      ev("session_meta", { id: "t" }),
      ev("event_msg", { type: "user_message", message: "go" }),
      ev("response_item", { type: "custom_tool_call", name: "apply_patch", call_id: "c1", input: patch }),
      ev("response_item", { type: "custom_tool_call_output", call_id: "c1", output: "Success." }),
      ev("response_item", {
        type: "function_call",
        name: "shell",
        call_id: "c2",
        arguments: JSON.stringify({ command: ["bash", "-lc", "npm test"] })
      }),
      ev("response_item", {
        type: "function_call_output",
        call_id: "c2",
        output: JSON.stringify({ output: "ok", metadata: { exit_code: 0, duration_seconds: 1.5 } })
      }),
      ev("event_msg", { type: "task_complete" })
    ])
    const change = completed(out).find((i) => i.type === "file_change")
    assert.strictEqual(change?.type === "file_change" ? change.unified_diff : "", applyPatchDiff(patch))
    const fold = makeExplanationFold("codex-t")
    for (const record of recordsOf(out)) fold.add(record)
    const model = fold.model({ scope: "session", revision: "r", evictedTurns: 0 })
    assert.deepStrictEqual(model.changes.map((c) => c.path), ["src/b.ts"])
    assert.deepStrictEqual(model.verification.map((v) => [v.fact.label, v.status, v.fresh]), [[
      "npm test",
      "passed",
      true
    ]])
    assert.isFalse(model.completeness.warnings.some((w) => w.includes("diff unavailable")))
    assert.isFalse(model.review_priorities.some((r) => r.reason.includes("No passing verification")))
  })
})

describe("multi-file diffs read back by the explanation", () => {
  const ev = (type: string, payload: Record<string, unknown>) => ({ timestamp: ts, type, payload })
  /** The review reasons of a session whose one patch adds `added` lines to a.ts, then one to b.ts. */
  const reasons = (added: number) => {
    const lines = Array.from({ length: added }, (_, i) => `+line ${i}`).join("\n")
    const patch = `*** Begin Patch\n*** Update File: a.ts\n@@\n${lines}\n*** Update File: b.ts\n@@\n+z\n*** End Patch`
    const out = run(codexRolloutMapper, "codex-m", [
      ev("session_meta", { id: "m" }),
      ev("event_msg", { type: "user_message", message: "go" }),
      ev("response_item", { type: "custom_tool_call", name: "apply_patch", call_id: "p", input: patch }),
      ev("response_item", { type: "custom_tool_call_output", call_id: "p", output: "Success." })
    ])
    const fold = makeExplanationFold("codex-m")
    for (const record of recordsOf(out)) fold.add(record)
    const model = fold.model({ scope: "session", revision: "r", evictedTurns: 0 })
    assert.deepStrictEqual(model.changes.map((c) => c.path), ["a.ts", "b.ts"])
    return model.review_priorities.filter((r) => r.reason.startsWith("Large diff")).map((r) => r.fact.path)
  }

  it("counts each file's changed lines without taking the next file's header for a removal", () => {
    assert.deepStrictEqual(reasons(199), [])
    assert.deepStrictEqual(reasons(200), ["a.ts"])
  })
})

describe("SEARCH/REPLACE blocks (Cline replace_in_file, Roo Code apply_diff)", () => {
  it("turns each block of either marker style into one hunk under a single file header", () => {
    const cline = "------- SEARCH\nconst a = 1\nconst b = 2\n=======\nconst a = 1\nconst b = 3\n+++++++ REPLACE\n" +
      "<<<<<<< SEARCH\nold()\n=======\nfresh()\n>>>>>>> REPLACE"
    assert.strictEqual(
      searchReplaceDiff("src/x.ts", cline),
      "--- a/src/x.ts\n+++ b/src/x.ts\n@@\n const a = 1\n-const b = 2\n+const b = 3\n@@\n-old()\n+fresh()\n"
    )
  })
  it("drops Roo Code's :start_line: and rule lines, and gives nothing for text without a whole block", () => {
    const roo = "<<<<<<< SEARCH\n:start_line:10\n-------\nx\n=======\ny\n>>>>>>> REPLACE"
    assert.strictEqual(searchReplaceDiff("a.ts", roo), "--- a/a.ts\n+++ b/a.ts\n@@\n-x\n+y\n")
    assert.strictEqual(searchReplaceDiff("a.ts", "<<<<<<< SEARCH\nx\n=======\ny"), undefined)
    assert.strictEqual(searchReplaceDiff("a.ts", "just text"), undefined)
  })
})
