/**
 * What every importer of a foreign session format shares (docs/import.md): the identity of the
 * session a source becomes, the cursor that numbers turns and items while a source is mapped,
 * and the pure helpers that turn "a prompt arrived", "an item happened", "the turn ended" into
 * ThreadEvents. The cursor is plain JSON so an import can stop at any record and resume later
 * from the persisted cursor with exactly the events a single pass would have written.
 *
 * **Gotchas**: a source may still be written (a live rollout), so the last turn of a source is
 * not closed at its end of file while the source is live: it is closed when the source shows the
 * end (a next prompt, an explicit end record) or when the importer finds the source finished
 * (idle, or ended) and calls the mapper's `finish`, which closes the open turn with its usage and
 * writes `thread.completed`. Closing it while live would make "import half, then the rest" differ
 * from "import all at once". A finished source that grows again reopens the session with a new
 * `thread.started` (the log is append-only; the earlier `thread.completed` stays).
 */
import { Schema } from "effect"
import type { ThreadEvent } from "../contract/ThreadEvent.ts"
import { UsageTotals, zeroUsage } from "../contract/Usage.ts"
import { isLegacyCodexHeader } from "./internal/codexLegacy.ts"
import { isCopilotEvent } from "./internal/copilotRecord.ts"
import { isRecord } from "./internal/foreignJson.ts"
import { finishThread } from "./internal/importTurns.ts"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** The foreign formats Logbook imports. */
export const ImportFormat = Schema.Literals([
  "codex",
  "claude",
  "exec",
  "gemini",
  "copilot",
  "cline",
  "roo",
  "cursor",
  "aider",
  "opencode"
])

/** The foreign formats Logbook imports. */
export type ImportFormat = typeof ImportFormat.Type

/** Which session a source becomes: its id (`codex-<thread id>`, …) and the parent session it names, if any. */
export const ImportIdentity = Schema.Struct({
  sessionId: Schema.String,
  threadId: Schema.String,
  parentSessionId: Schema.optionalKey(Schema.String)
})

/** Which session a source becomes. */
export type ImportIdentity = typeof ImportIdentity.Type

/**
 * Where a mapping stands: whether `thread.started` was written, the open turn (if any), how many
 * turns and items were numbered, the usage of the open turn and the last source timestamp seen.
 */
export const ImportCursor = Schema.Struct({
  identity: ImportIdentity,
  started: Schema.Boolean,
  open: Schema.Boolean,
  turnSeq: Count,
  turnId: Schema.String,
  itemSeq: Count,
  usage: UsageTotals,
  lastTs: Schema.String,
  /** The first source timestamp seen (the session's `created_at`); absent in states saved before it was kept. */
  firstTs: Schema.optionalKey(Schema.String),
  /** Whether `finish` wrote `thread.completed` and nothing was mapped since. */
  finished: Schema.optionalKey(Schema.Boolean),
  /** Usage of the turns already closed, summed (the `thread.completed` total). */
  spent: Schema.optionalKey(UsageTotals)
})

/** Where a mapping stands. */
export type ImportCursor = typeof ImportCursor.Type

/** A fresh cursor for a source that becomes `identity`. */
export const initialCursor = (identity: ImportIdentity): ImportCursor => ({
  identity,
  started: false,
  open: false,
  turnSeq: 0,
  turnId: "",
  itemSeq: 0,
  usage: zeroUsage,
  lastTs: ""
})

/**
 * The `finish` and `cursor` of a mapper whose state keeps its cursor in a `cursor` field (every
 * built-in mapper's does): `finish` closes the open turn and writes `thread.completed`.
 */
export const finishingOf = <S extends { readonly cursor: ImportCursor }>(): {
  readonly finish: (state: S) => MapStep<S>
  readonly cursor: (state: S) => ImportCursor
} => ({
  finish: (state) => {
    const finished = finishThread(state.cursor)
    return { state: { ...state, cursor: finished.cursor }, events: finished.events }
  },
  cursor: (state) => state.cursor
})

/** The result of mapping one source record: the new state, the events to append, and why it was skipped (if it was). */
export interface MapStep<S> {
  readonly state: S
  readonly events: ReadonlyArray<ThreadEvent>
  /** Set when the record produced nothing: a short reason, counted in the import report. */
  readonly skipped?: string
}

/** A mapper of one foreign format: a pure reducer over parsed records. */
export interface ImportMapper<S> {
  readonly format: ImportFormat
  /** The persisted form of the state (validated when an import resumes). */
  readonly state: Schema.Codec<S, unknown>
  /** The identity a record gives, when it names the session (the first one that does wins). */
  readonly identify: (record: unknown) => ImportIdentity | undefined
  readonly initial: (identity: ImportIdentity) => S
  readonly step: (state: S, record: unknown) => MapStep<S>
  /** The usage counted so far for a turn that is still open (reported, never invented into the log). */
  readonly openUsage: (state: S) => UsageTotals
  /**
   * The source is finished (idle past the importer's window, or ended): closes the open turn with
   * its usage and writes `thread.completed`; nothing when it was already finished. Optional, so a
   * new mapper can start without it (its sessions then stay `active`); every built-in one has it
   * (see {@link finishingOf}).
   */
  readonly finish?: ((state: S) => MapStep<S>) | undefined
  /** The cursor inside the state (source times, whether finished); optional like `finish`. */
  readonly cursor?: ((state: S) => ImportCursor) | undefined
  /** The version of the writing tool a record names (Codex `cli_version`, Claude Code `version`), if it does. */
  readonly version?: ((record: unknown) => string | undefined) | undefined
}

/**
 * Recognises the format of a session file from one of its parsed records (`undefined`: this
 * record does not tell): Codex rollout envelopes and legacy headers, Gemini CLI headers (`sessionId` +
 * `projectHash`), Claude Code records (`sessionId`, or a leading `summary` / snapshot), and
 * `codex exec --json` events.
 */
export const recogniseImportFormat = (record: unknown): ImportFormat | undefined => {
  if (!isRecord(record)) return undefined
  if (isLegacyCodexHeader(record)) return "codex"
  const type = record["type"]
  if (isCopilotEvent(record)) return "copilot"
  if (typeof record["sessionId"] === "string" && typeof record["projectHash"] === "string") return "gemini"
  if (typeof type !== "string") {
    // Cursor agent transcripts: `{role, message: {content}}` and no type.
    const role = record["role"]
    return (role === "user" || role === "assistant") && isRecord(record["message"]) && !("sessionId" in record)
      ? "cursor"
      : undefined
  }
  if (
    ["session_meta", "response_item", "event_msg", "turn_context", "compacted"].includes(type) && "payload" in record
  ) {
    return "codex"
  }
  if (typeof record["sessionId"] === "string" || ["summary", "file-history-snapshot"].includes(type)) return "claude"
  if (type === "thread.started" || type === "turn.started" || type.startsWith("item.")) return "exec"
  return undefined
}
