/**
 * The pure import mappers on hand-made records for what the real fixtures lack: Claude subagent
 * identities naming their parent, Codex forked threads, user-shell commands, patches, aborted
 * turns and repeated token totals counted once; the bubbles of Cursor's older chat panel.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ImportIdentity, ImportMapper, ThreadEvent } from "@logbook/domain"
import {
  claudeTranscriptIdentity,
  claudeTranscriptMapper,
  codexRolloutIdentity,
  codexRolloutMapper,
  copilotEventsMapper,
  cursorComposerMapper,
  isClaudePrompt,
  patchChanges
} from "@logbook/domain"

/** The events a mapper writes for `records`, folded from its initial state. */
const runMapper = <S>(
  mapper: ImportMapper<S>,
  identity: ImportIdentity,
  records: ReadonlyArray<unknown>
): Array<ThreadEvent> => {
  let state = mapper.initial(identity)
  const events: Array<ThreadEvent> = []
  for (const record of records) {
    const step = mapper.step(state, record)
    state = step.state
    events.push(...step.events)
  }
  return events
}

const runCodex = (records: ReadonlyArray<unknown>) =>
  runMapper(codexRolloutMapper, { sessionId: "codex-t", threadId: "t" }, records)

const ev = (type: string, payload: Record<string, unknown>) => ({
  timestamp: "2026-01-01T00:00:00.000Z",
  type,
  payload
})
const tokens = (output: number) =>
  ev("event_msg", {
    type: "token_count",
    info: { total_token_usage: { input_tokens: 10 * output, cached_input_tokens: 0, output_tokens: output } }
  })

describe("import identities", () => {
  it("a Claude subagent record becomes its own session naming the main session as parent", () => {
    const identity = claudeTranscriptIdentity({ sessionId: "s1", isSidechain: true, agentId: "a937f53", type: "user" })
    assert.deepStrictEqual(identity, {
      sessionId: "claude-s1-agent-a937f53",
      threadId: "claude-s1-agent-a937f53",
      parentSessionId: "claude-s1"
    })
    assert.deepStrictEqual(claudeTranscriptIdentity({ sessionId: "s1", type: "user" }), {
      sessionId: "claude-s1",
      threadId: "claude-s1"
    })
  })

  it("a forked Codex thread names its parent thread's session", () => {
    const identity = codexRolloutIdentity(ev("session_meta", { id: "child", forked_from_id: "parent" }))
    assert.strictEqual(identity?.parentSessionId, "codex-parent")
  })
})

describe("Codex rollout mapping", () => {
  it("repeated token totals count once and an aborted turn fails with its usage", () => {
    const events = runCodex([
      ev("session_meta", { id: "t" }),
      ev("event_msg", { type: "user_message", message: "hi" }),
      tokens(5),
      tokens(5),
      tokens(7),
      ev("event_msg", { type: "turn_aborted", reason: "interrupted" })
    ])
    const failed = events.find((e) => e.type === "turn.failed")
    assert.strictEqual(failed?.type === "turn.failed" ? failed.usage?.output_tokens : -1, 7)
  })

  it("a user shell command and an apply_patch call become command_execution and file_change", () => {
    const patch =
      "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: src/b.ts\n@@\n*** Delete File: c\n*** End Patch"
    const events = runCodex([
      ev("session_meta", { id: "t" }),
      ev("event_msg", { type: "user_message", message: "go" }),
      ev("event_msg", {
        type: "exec_command_end",
        source: "user_shell",
        command: ["ls"],
        exit_code: 0,
        aggregated_output: "a"
      }),
      ev("response_item", { type: "custom_tool_call", name: "apply_patch", call_id: "c1", input: patch }),
      ev("response_item", { type: "custom_tool_call_output", call_id: "c1", output: "Success." }),
      ev("event_msg", { type: "task_complete" })
    ])
    const items = events.flatMap((e) => e.type === "item.completed" ? [e.item] : [])
    assert.deepStrictEqual(items.map((i) => i.type), ["command_execution", "file_change"])
    const change = items[1]
    assert.deepStrictEqual(change?.type === "file_change" ? change.changes : [], patchChanges(patch))
    assert.deepStrictEqual(patchChanges(patch).map((c) => c.kind), ["add", "update", "delete"])
    assert.strictEqual(events.at(-1)?.type, "turn.completed")
  })
})

const runCopilot = (records: ReadonlyArray<unknown>) =>
  runMapper(copilotEventsMapper, { sessionId: "copilot-c", threadId: "c" }, records)

// Record shapes from the Copilot SDK's session-events.schema.json (CompactionCompleteData).
const copilot = (type: string, data: Record<string, unknown>) => ({
  type,
  data,
  id: `${type}-id`,
  timestamp: "2026-08-01T10:00:00.000Z",
  parentId: null
})

describe("Copilot CLI mapping", () => {
  it("a successful compaction is the compaction boundary with the record's counts, a failed one an error", () => {
    const events = runCopilot([
      copilot("session.start", { sessionId: "c" }),
      copilot("user.message", { content: "tidy the parser" }),
      copilot("session.compaction_complete", {
        success: true,
        trigger: "context_limit_retry",
        preCompactionMessagesLength: 40,
        messagesRemoved: 31
      }),
      copilot("session.compaction_complete", { success: false, error: "empty model response" })
    ])
    const boundary = events.find((e) => e.type === "thread.compact_boundary")
    assert.deepInclude(boundary, {
      thread_id: "c",
      trigger: "recovery",
      mode: "local",
      original_message_count: 40,
      compacted_message_count: 9
    })
    const failed = events.flatMap((e) => e.type === "item.completed" && e.item.type === "error" ? [e.item.message] : [])
    assert.deepStrictEqual(failed, ["compaction failed: empty model response"])
  })
})

describe("Claude Code mapping", () => {
  it("a <task-notification> user record is a background-completion harness item of the open turn, not a prompt", () => {
    const notification = "<task-notification>\n<task-id>be613ab</task-id>\n" +
      "<output-file>/tmp/claude-1000/tasks/be613ab.output</output-file>\n<status>completed</status>\n" +
      "<summary>Background command \"Run tests\" completed (exit code 0)</summary>\n</task-notification>\n" +
      "Read the output file to retrieve the result: /tmp/claude-1000/tasks/be613ab.output"
    const user = (text: string, uuid: string) => ({
      type: "user",
      uuid,
      sessionId: "s1",
      timestamp: "2026-02-11T22:11:48.270Z",
      message: { role: "user", content: text }
    })
    assert.isFalse(isClaudePrompt(user(notification, "u2")))
    const events = runMapper(claudeTranscriptMapper, { sessionId: "claude-s1", threadId: "claude-s1" }, [
      user("run the tests in the background", "u1"),
      user(notification, "u2")
    ])
    assert.strictEqual(events.filter((e) => e.type === "turn.started").length, 1)
    const harness = events.flatMap((e) => e.type === "item.completed" && e.item.type === "harness" ? [e.item] : [])
    assert.deepInclude(harness[0], {
      event: "background_subprocess_completed",
      task_id: "be613ab",
      path: "/tmp/claude-1000/tasks/be613ab.output",
      status: "completed",
      message: "Background command \"Run tests\" completed (exit code 0)"
    })
  })
})

describe("Cursor IDE mapping", () => {
  it("the older chat panel's bubbles (type \"user\" / \"ai\") are prompts and answers like the composer's 1 / 2", () => {
    const events = runMapper(cursorComposerMapper, { sessionId: "cursor-ide-tab", threadId: "tab" }, [
      { composerId: "tab", createdAt: 1_731_818_231_743, conversation: [] },
      { type: "user", id: "b1", text: "create a dedicated page" },
      { type: "ai", id: "b2", text: "I'll help you create it." },
      { type: "user", id: "b3", text: "" },
      { type: "bot", id: "b4", text: "not a kind Cursor writes" }
    ])
    assert.deepStrictEqual(
      events.flatMap((e) => e.type === "turn.started" ? [e.context?.goal] : []),
      ["create a dedicated page"]
    )
    assert.deepStrictEqual(
      events.flatMap((e) => e.type === "item.completed" && e.item.type === "agent_message" ? [e.item.text] : []),
      ["I'll help you create it."]
    )
  })
})
