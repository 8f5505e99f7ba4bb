/**
 * The transcript of a session for the HTML report (docs/explain.md#the-html-report): each turn's
 * prompt and what the agent did in it — messages, reasoning, commands with exit code and output,
 * tool calls with their output, edits with their diff, errors — folded from the same records the
 * explanation reads, with the byte offset of every record so the report's evidence links can
 * point at the entry that holds them. Pure and bounded: every text is redacted and cut
 * ({@link TRANSCRIPT_LIMITS}), and past {@link TRANSCRIPT_LIMITS.total} characters entries are
 * only counted.
 *
 * **Gotchas**: an item's records (started/updated/completed) fold into one entry keyed by item id
 * within its turn, the latest record's fields winning where present; a `tool_output` folds into
 * the invocation its `call_id` names (or stands alone when there is none).
 */
import { publicPath, publicText } from "../contract/Redaction.ts"
import { isJsonObject } from "../internal/jsonText.ts"
import type { ExplanationRecord } from "./ExplanationModel.ts"
import type { Json } from "./internal/eventAccess.ts"
import { str, toolLabel } from "./internal/eventAccess.ts"

/** The bounds of a transcript's texts (characters). */
export const TRANSCRIPT_LIMITS = {
  prompt: 8000,
  message: 8000,
  reasoning: 4000,
  output: 4000,
  diff: 16000,
  title: 600,
  /** Entries whose texts would pass this total are counted, not kept. */
  total: 4 * 1024 * 1024
} as const

/** What kind of entry a transcript holds. */
export type TranscriptEntryKind = "message" | "reasoning" | "command" | "tool" | "edit" | "error"

/** One thing the agent did in a turn, merged over its records. */
export interface TranscriptEntry {
  readonly kind: TranscriptEntryKind
  readonly itemId: string
  /** Byte offsets of every record of this entry (the report anchors each one). */
  readonly offsets: Array<number>
  /** The command, the changed paths, the tool and its subject; empty for messages. */
  title: string
  /** The message, reasoning, output or diff text (redacted, bounded). */
  text: string
  status: string | null
  exitCode: number | null
}

/** One turn: its prompt (when the source recorded it) and its entries in recorded order. */
export interface TranscriptTurn {
  /** 1-based; 0 holds what came before the first turn. */
  readonly index: number
  readonly prompt: string | null
  /** Byte offset of the `turn.started` record (null for turn 0). */
  readonly offset: number | null
  readonly timestamp: string | null
  status: string
  readonly entries: Array<TranscriptEntry>
}

/** A session's transcript. */
export interface Transcript {
  readonly turns: ReadonlyArray<TranscriptTurn>
  /** Entries past the total bound, counted only. */
  readonly omittedEntries: number
}

/** The transcript reducer: feed records in file order, read the transcript at any point. */
export interface TranscriptFold {
  readonly add: (record: ExplanationRecord) => void
  readonly transcript: () => Transcript
}

const int = (o: Json, key: string): number | null => {
  const v = o[key]
  return typeof v === "number" && Number.isInteger(v) ? v : null
}

/** A new, empty transcript fold. */
export const makeTranscriptFold = (): TranscriptFold => {
  const turns: Array<TranscriptTurn> = []
  let current: TranscriptTurn | undefined
  let byId = new Map<string, TranscriptEntry>()
  let used = 0
  let omitted = 0
  let numbered = 0

  const turn = (): TranscriptTurn => {
    if (current !== undefined) return current
    const zero: TranscriptTurn = { index: 0, prompt: null, offset: null, timestamp: null, status: "", entries: [] }
    turns.push(zero)
    current = zero
    return zero
  }

  const bounded = (text: string, limit: number): string => {
    const shown = publicText(text, limit)
    used += shown.length
    return shown
  }

  const entry = (kind: TranscriptEntryKind, id: string, offset: number): TranscriptEntry | undefined => {
    const known = byId.get(id)
    if (known !== undefined) {
      known.offsets.push(offset)
      return known
    }
    if (used >= TRANSCRIPT_LIMITS.total) {
      omitted++
      return undefined
    }
    const e: TranscriptEntry = {
      kind,
      itemId: id,
      offsets: [offset],
      title: "",
      text: "",
      status: null,
      exitCode: null
    }
    byId.set(id, e)
    turn().entries.push(e)
    return e
  }

  const applyItem = (item: Json, offset: number): void => {
    const id = str(item, "id") ?? ""
    const status = str(item, "status") ?? null
    switch (str(item, "type")) {
      case "agent_message":
      case "reasoning": {
        const kind = str(item, "type") === "agent_message" ? "message" : "reasoning"
        const e = entry(kind, id, offset)
        const text = str(item, "text") ?? ""
        if (e !== undefined && text.length > 0) {
          e.text = bounded(text, kind === "message" ? TRANSCRIPT_LIMITS.message : TRANSCRIPT_LIMITS.reasoning)
        }
        return
      }
      case "command_execution": {
        const e = entry("command", id, offset)
        if (e === undefined) return
        e.title = bounded(str(item, "command") ?? "", TRANSCRIPT_LIMITS.title)
        const output = str(item, "aggregated_output") ?? ""
        if (output.length > 0) e.text = bounded(output, TRANSCRIPT_LIMITS.output)
        e.status = status ?? e.status
        e.exitCode = int(item, "exit_code") ?? e.exitCode
        return
      }
      case "file_change": {
        const e = entry("edit", id, offset)
        if (e === undefined) return
        const changes = Array.isArray(item.changes) ? item.changes : []
        const paths = changes.flatMap((c) => isJsonObject(c) && typeof c.path === "string" ? [publicPath(c.path)] : [])
        e.title = bounded(paths.join(", ") || "(no paths)", TRANSCRIPT_LIMITS.title)
        const diff = str(item, "unified_diff")
        if (diff !== undefined) e.text = bounded(diff, TRANSCRIPT_LIMITS.diff)
        e.status = status ?? e.status
        return
      }
      case "tool_invocation":
      case "mcp_tool_call": {
        const e = entry("tool", id, offset)
        if (e === undefined) return
        const name = str(item, "tool_name") ?? "tool"
        const label = toolLabel(name, item)
        if (e.title.length === 0 || label !== name) {
          e.title = bounded(str(item, "type") === "mcp_tool_call" ? `mcp ${name}` : label, TRANSCRIPT_LIMITS.title)
        }
        e.status = status ?? e.status
        return
      }
      case "tool_output": {
        const callId = str(item, "call_id") ?? ""
        const e = callId.length > 0 && byId.has(callId) ? entry("tool", callId, offset) : entry("tool", id, offset)
        if (e === undefined) return
        const output = str(item, "output") ?? ""
        if (output.length > 0) e.text = bounded(output, TRANSCRIPT_LIMITS.output)
        e.exitCode = int(item, "exit_code") ?? e.exitCode
        if (e.status === null) e.status = status
        return
      }
      case "web_search": {
        const e = entry("tool", id, offset)
        if (e !== undefined) e.title = bounded(`search: ${str(item, "query") ?? ""}`, TRANSCRIPT_LIMITS.title)
        return
      }
      case "error": {
        const e = entry("error", id, offset)
        if (e !== undefined) e.text = bounded(str(item, "message") ?? "", TRANSCRIPT_LIMITS.message)
        return
      }
      default:
        return
    }
  }

  const add = (record: ExplanationRecord): void => {
    const event = record.event
    if (event === undefined) return
    const type = str(event, "type")
    if (type === "turn.started") {
      const ctx = isJsonObject(event.context) ? event.context : undefined
      const goal = ctx === undefined ? undefined : str(ctx, "goal")
      const next: TranscriptTurn = {
        index: ++numbered,
        prompt: goal === undefined ? null : bounded(goal, TRANSCRIPT_LIMITS.prompt),
        offset: record.offset,
        timestamp: ctx === undefined ? null : str(ctx, "timestamp") ?? null,
        status: "in progress",
        entries: []
      }
      turns.push(next)
      current = next
      byId = new Map()
      return
    }
    if (type === "turn.completed" || type === "turn.failed" || type === "turn.blocked") {
      if (current !== undefined) current.status = type.slice("turn.".length)
      return
    }
    if (type === "item.started" || type === "item.updated" || type === "item.completed") {
      if (isJsonObject(event.item)) applyItem(event.item, record.offset)
    }
  }

  return { add, transcript: () => ({ turns, omittedEntries: omitted }) }
}
