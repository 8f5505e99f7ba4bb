/**
 * The pure reading and mapping of an Aider chat history (`.aider.chat.history.md` in a repository,
 * appended to by every run) to ThreadEvents (docs/import.md#aider). {@link aiderRecords} splits the
 * Markdown into records — a run header `# aider chat started at …`, a prompt (consecutive `#### `
 * lines), an output block (consecutive `> ` lines) and the assistant text between them — which the
 * mapper folds: a prompt opens a turn, text is an `agent_message`, `/run` / `/test` / `!` prompts
 * are commands with the output block after them, `> Applied edit to <path>` is a file change and
 * `> Tokens: N sent, M received` the turn's usage.
 *
 * **Gotchas**: the run header's time has no zone; it is taken as UTC. Records within a run carry no
 * time of their own: they get their run's.
 */
import { Schema } from "effect"
import type { ThreadEvent } from "../contract/ThreadEvent.ts"
import { addUsage, zeroUsage } from "../contract/Usage.ts"
import type { ImportIdentity, ImportMapper, MapStep } from "./ImportCursor.ts"
import { finishingOf, ImportCursor as ImportCursorSchema, initialCursor } from "./ImportCursor.ts"
import { str } from "./internal/foreignJson.ts"
import type { ItemBody } from "./internal/importTurns.ts"
import { itemEvent, nextItemId, openTurn, seen, startThread } from "./internal/importTurns.ts"

/** One record of an Aider history: a run header, a prompt, an output block or assistant text. */
export interface AiderRecord {
  readonly aider: "run" | "prompt" | "output" | "text"
  readonly text: string
}

const RUN = /^# aider chat started at (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\s*$/u

/**
 * The records of an Aider history's text, in order. Lines end in two spaces (Markdown line
 * breaks), which are removed; blank lines separate blocks; a fenced block inside assistant text
 * stays text (its `>>>>>>> REPLACE` line is not an output line).
 */
export const aiderRecords = (text: string): Array<AiderRecord> => {
  const out: Array<AiderRecord> = []
  let kind: AiderRecord["aider"] | undefined
  let lines: Array<string> = []
  const flush = () => {
    if (kind !== undefined) {
      const body = lines.join("\n")
      if (kind !== "text" || body.trim().length > 0) {
        out.push({ aider: kind, text: kind === "text" ? body.trim() : body })
      }
    }
    kind = undefined
    lines = []
  }
  let fenced = false
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\r$/u, "").replace(/ {2}$/u, "")
    // Inside a fenced block of assistant text (an edit's SEARCH/REPLACE), every line is text.
    if (kind === "text" && (fenced || line.startsWith("```"))) {
      if (line.startsWith("```")) fenced = !fenced
      lines.push(line)
      continue
    }
    const run = RUN.exec(line)
    if (run !== null) {
      flush()
      out.push({ aider: "run", text: `${run[1]}T${run[2]}Z` })
      continue
    }
    const next: AiderRecord["aider"] = line.startsWith("####") ? "prompt" : line.startsWith(">") ? "output" : "text"
    if (next !== kind && !(kind === "text" && line.trim().length === 0)) flush()
    if (next === "text" && kind === undefined && line.trim().length === 0) continue
    kind = next
    lines.push(next === "prompt" ? line.replace(/^#### ?/u, "") : next === "output" ? line.replace(/^> ?/u, "") : line)
  }
  flush()
  return out
}

/** The reducer state of an Aider history import. */
export const AiderHistoryState = Schema.Struct({
  cursor: ImportCursorSchema,
  /** A command prompt (`/run`, `/test`, `!`) waiting for its output block. */
  command: Schema.optionalKey(Schema.String)
})

/** The reducer state of an Aider history import. */
export type AiderHistoryState = typeof AiderHistoryState.Type

/** The header the importer makes for a history file: an id derived from its path. */
export const aiderHeader = (id: string) => ({ aiderHistory: id })

const identify = (record: unknown): ImportIdentity | undefined => {
  const id = str(record, "aiderHistory")
  return id === undefined || id.length === 0 ? undefined : { sessionId: `aider-${id}`, threadId: id }
}

const COMMAND = /^(?:\/(?:run|test)\s+|!)([\s\S]+)$/u
const TOKENS =
  /^Tokens: ([\d.]+)(k?) sent(?:, ([\d.]+)(k?) cache write)?(?:, ([\d.]+)(k?) cache hit)?, ([\d.]+)(k?) received/mu
const APPLIED = /^Applied edit to (.+)$/gmu

const count = (n: string | undefined, k: string | undefined): number =>
  n === undefined ? 0 : Math.round(Number(n) * (k === "k" ? 1000 : 1))

const skip = (state: AiderHistoryState, reason: string): MapStep<AiderHistoryState> => ({
  state,
  events: [],
  skipped: reason
})

const emit = (state: AiderHistoryState, bodies: ReadonlyArray<ItemBody>): MapStep<AiderHistoryState> => {
  const started = startThread(state.cursor)
  let cursor = started.cursor
  const events: Array<ThreadEvent> = [...started.events]
  for (const body of bodies) {
    const n = nextItemId(cursor)
    cursor = n.cursor
    events.push(itemEvent("item.completed", cursor, n.id, cursor.lastTs, body))
  }
  return { state: { ...state, cursor }, events }
}

/** Maps one Aider record (see {@link aiderRecords}) or the importer's header. */
export const stepAiderHistory = (state: AiderHistoryState, record: unknown): MapStep<AiderHistoryState> => {
  if (identify(record) !== undefined) {
    const started = startThread(state.cursor)
    return { state: { ...state, cursor: started.cursor }, events: started.events }
  }
  const kind = str(record, "aider")
  const text = str(record, "text") ?? ""
  if (kind === "run") return skip({ ...state, cursor: seen(state.cursor, text) }, "run header (its time)")
  if (kind === "prompt") {
    const { command: _dropped, ...rest } = state
    const opened = openTurn(rest.cursor, text, rest.cursor.lastTs)
    const command = COMMAND.exec(text.trim())?.[1]
    return {
      state: { ...rest, cursor: opened.cursor, ...(command === undefined ? {} : { command }) },
      events: opened.events
    }
  }
  if (kind === "text") return emit(state, [{ type: "agent_message", text }])
  if (kind === "output") {
    const bodies: Array<ItemBody> = []
    let s = state
    if (s.command !== undefined) {
      bodies.push({ type: "command_execution", command: s.command, aggregated_output: text, status: "completed" })
      const { command: _done, ...rest } = s
      s = rest
    }
    for (const m of text.matchAll(APPLIED)) {
      bodies.push({ type: "file_change", changes: [{ path: m[1] ?? "", kind: "update" }], status: "completed" })
    }
    const tokens = TOKENS.exec(text)
    if (tokens !== null) {
      s = {
        ...s,
        cursor: {
          ...s.cursor,
          usage: addUsage(s.cursor.usage, {
            input_tokens: count(tokens[1], tokens[2]),
            cache_creation_tokens: count(tokens[3], tokens[4]),
            cached_input_tokens: count(tokens[5], tokens[6]),
            output_tokens: count(tokens[7], tokens[8])
          })
        }
      }
    }
    return bodies.length === 0 ? skip(s, "output block (aider messages)") : emit(s, bodies)
  }
  return skip(state, "unknown record")
}

/** The Aider chat history mapper. */
export const aiderHistoryMapper: ImportMapper<AiderHistoryState> = {
  format: "aider",
  state: AiderHistoryState,
  identify,
  initial: (identity) => ({ cursor: initialCursor(identity) }),
  step: stepAiderHistory,
  openUsage: (state) => (state.cursor.open ? state.cursor.usage : zeroUsage),
  ...finishingOf<AiderHistoryState>()
}
