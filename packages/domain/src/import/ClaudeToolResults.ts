/**
 * Claude Code's separated tool results (docs/import.md#separated-tool-results): since 2.0.60 a
 * tool result too large for the transcript is written to `<session>/tool-results/<name>.txt` (or
 * `.json`) beside the transcript, and the transcript's `tool_result` holds only a placeholder:
 *
 * ```text
 * <persisted-output>
 * Output too large (141KB). Full output saved to: /home/…/<session>/tool-results/toolu_….txt
 *
 * Preview (first 2KB):
 * …
 * </persisted-output>
 * ```
 *
 * (older wordings: `Tool result saved to: <path>`, `Output has been saved to <path>`), and a
 * `Bash` result may name the file in `toolUseResult.persistedOutputPath`. This module finds those
 * references in a parsed record and puts the file's text in place of the placeholder; reading
 * the file is the importer's (projections), which knows where the transcript lives.
 *
 * **Gotchas**: only the reference's *file name* is used, and only when it is a plain name in a
 * `tool-results` directory: the importer reads it from the transcript's own session directory,
 * never from the absolute path the record names (a transcript is untrusted input, and the path
 * is the writer's machine's anyway).
 */
import { arr, field, isRecord, str } from "./internal/foreignJson.ts"
import type { JsonRecord } from "./internal/foreignJson.ts"

/** The tag that opens a placeholder Claude Code writes for a tool result it moved to a file. */
export const PERSISTED_OUTPUT_TAG = "<persisted-output>"

/** One tool result of a record that names a separated file: the call it answers and the file's name. */
export interface ClaudeToolResultRef {
  readonly toolUseId: string
  /** The file's name inside the session's `tool-results/` directory (`toolu_….txt`, `b5.txt`, …). */
  readonly file: string
}

const SAVED_TO = /(?:Full output saved to|Output has been saved to|Tool result saved to):?\s*(\S+)/u

/** File names Claude Code gives a separated result: a tool-use id or a short slug, `.txt` or `.json`. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,159}\.(?:txt|json)$/u

/** The file name a reference path names, when the path is `…/tool-results/<safe name>`. */
const fileNameOf = (path: string): string | undefined => {
  const parts = path.split(/[\\/]/u)
  const name = parts[parts.length - 1] ?? ""
  return parts.length >= 2 && parts[parts.length - 2] === "tool-results" && SAFE_NAME.test(name) ? name : undefined
}

/** The text of a `tool_result` content: a string, or its `text` blocks joined. */
const resultText = (content: unknown): string => {
  if (typeof content === "string") return content
  const parts: Array<string> = []
  for (const block of Array.isArray(content) ? content : []) {
    const text = str(block, "text")
    if (str(block, "type") === "text" && text !== undefined) parts.push(text)
  }
  return parts.join("\n")
}

/** Whether a tool result's text is a placeholder for a separated file. */
export const isPersistedPlaceholder = (text: string): boolean => text.trimStart().startsWith(PERSISTED_OUTPUT_TAG)

const toolResults = (record: unknown): ReadonlyArray<unknown> => {
  if (str(record, "type") !== "user") return []
  const content = arr(field(record, "message"), "content")
  return content === undefined ? [] : content.filter((block) => str(block, "type") === "tool_result")
}

/**
 * The separated files a `user` record's tool results name (none for any other record): a
 * placeholder's `saved to` path, else — for the record's only tool result — the
 * `toolUseResult.persistedOutputPath`; a path that is not `…/tool-results/<plain name>` is ignored.
 */
export const claudeToolResultRefs = (record: unknown): ReadonlyArray<ClaudeToolResultRef> => {
  const blocks = toolResults(record)
  if (blocks.length === 0) return []
  const refs: Array<ClaudeToolResultRef> = []
  for (const block of blocks) {
    const toolUseId = str(block, "tool_use_id") ?? ""
    const text = resultText(field(block, "content"))
    if (toolUseId.length === 0 || !isPersistedPlaceholder(text)) continue
    const named = SAVED_TO.exec(text)?.[1]
    const persisted = blocks.length === 1 ? str(field(record, "toolUseResult"), "persistedOutputPath") : undefined
    const file = fileNameOf(named ?? persisted ?? "")
    if (file !== undefined) refs.push({ toolUseId, file })
  }
  return refs
}

/**
 * The record with the placeholder of each tool result in `texts` (by tool-use id) replaced by
 * that text; the record itself when there is nothing to replace.
 */
export const withClaudeToolResults = (record: unknown, texts: ReadonlyMap<string, string>): unknown => {
  if (texts.size === 0 || !isRecord(record)) return record
  const message = field(record, "message")
  const content = arr(message, "content")
  if (!isRecord(message) || content === undefined) return record
  const replaced = content.map((block): unknown => {
    const text = texts.get(str(block, "tool_use_id") ?? "")
    return text === undefined || !isRecord(block) || str(block, "type") !== "tool_result"
      ? block
      : { ...block, content: text }
  })
  const out: JsonRecord = { ...record, message: { ...message, content: replaced } }
  return out
}

/**
 * The whole output of a `Bash` result whose transcript text is a placeholder, when the record
 * still carries it in `toolUseResult.stdout` (2.1.x writes the full stdout there; the preview
 * is what the model saw): stdout, then stderr on its own line when there is any. Undefined
 * when the text is not a placeholder or the record has no such stdout.
 */
export const claudeBashFullOutput = (text: string, toolUseResult: unknown): string | undefined => {
  if (!isPersistedPlaceholder(text)) return undefined
  const stdout = str(toolUseResult, "stdout")
  if (stdout === undefined || stdout.length === 0 || isPersistedPlaceholder(stdout)) return undefined
  const stderr = str(toolUseResult, "stderr") ?? ""
  return stderr.length === 0 ? stdout : `${stdout}\n${stderr}`
}
