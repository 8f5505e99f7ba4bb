/**
 * The format registry: every foreign format's pure mapper from domain, behind one shape whose
 * state is hidden (and persisted as plain JSON), and the identity a source's file name gives when
 * its records name none.
 */
import type {
  ImportCursor,
  ImportFormat,
  ImportIdentity,
  ImportMapper,
  ThreadEvent,
  UsageTotals
} from "@logbook/domain"
import {
  aiderHistoryMapper,
  claudeTranscriptMapper,
  clineTaskMapper,
  codexExecMapper,
  codexRolloutMapper,
  copilotEventsMapper,
  cursorComposerMapper,
  cursorTranscriptMapper,
  geminiSessionMapper,
  openCodeExportMapper
} from "@logbook/domain"
import { Result, Schema } from "effect"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"

/** A mapping in progress: the mapper with its state kept inside, so the importer needs no state type. */
export interface MapperRun {
  readonly step: (record: unknown) => { readonly events: ReadonlyArray<ThreadEvent>; readonly skipped?: string }
  /** The state as the JSON saved in `derived/import.json`. */
  readonly snapshot: () => Schema.Json
  readonly openUsage: () => UsageTotals
  /** The source is finished: the events that close its open turn and complete the session (none when already done). */
  readonly finish: () => ReadonlyArray<ThreadEvent>
  /** The cursor as it stands (source times, whether finished); undefined for a mapper without one. */
  readonly cursor: () => ImportCursor | undefined
}

/** A mapper of some format whose state type is hidden behind {@link MapperRun}. */
export interface AnyMapper {
  readonly identify: (record: unknown) => ImportIdentity | undefined
  /** The writing tool's version a record names, if it does (reported per source). */
  readonly version: (record: unknown) => string | undefined
  readonly start: (identity: ImportIdentity) => MapperRun
  readonly resume: (saved: unknown) => Result.Result<MapperRun, Schema.SchemaError>
}

const runOf = <S>(mapper: ImportMapper<S>, initial: S): MapperRun => {
  let state = initial
  return {
    step: (record) => {
      const result = mapper.step(state, record)
      state = result.state
      return result
    },
    snapshot: () => toJson(Schema.encodeUnknownSync(mapper.state)(state)),
    openUsage: () => mapper.openUsage(state),
    finish: () => {
      if (mapper.finish === undefined) return []
      const result = mapper.finish(state)
      state = result.state
      return result.events
    },
    cursor: () => mapper.cursor?.(state)
  }
}

const anyMapper = <S>(mapper: ImportMapper<S>): AnyMapper => ({
  identify: mapper.identify,
  version: (record) => mapper.version?.(record),
  start: (identity) => runOf(mapper, mapper.initial(identity)),
  resume: (saved) => Result.map(Schema.decodeUnknownResult(mapper.state)(saved), (state) => runOf(mapper, state))
})

/** Every format Logbook imports, with its pure mapper from domain. */
export const mappers: Readonly<Record<ImportFormat, AnyMapper>> = {
  codex: anyMapper(codexRolloutMapper),
  claude: anyMapper(claudeTranscriptMapper),
  exec: anyMapper(codexExecMapper),
  gemini: anyMapper(geminiSessionMapper),
  copilot: anyMapper(copilotEventsMapper),
  cline: anyMapper(clineTaskMapper("cline")),
  roo: anyMapper(clineTaskMapper("roo")),
  cursor: anyMapper(cursorTranscriptMapper),
  aider: anyMapper(aiderHistoryMapper),
  opencode: anyMapper(openCodeExportMapper)
}

/** The mapper of Cursor IDE chats (`state.vscdb`), format `cursor` beside the transcripts' default one. */
export const cursorComposer: AnyMapper = anyMapper(cursorComposerMapper)

/** The mapper of a format. */
export const mapperOf = (format: ImportFormat): AnyMapper => mappers[format]

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/u

const UUID = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/iu

/**
 * The identity a source's name gives when its records name none (`rollout-…-<uuid>.jsonl`,
 * `<uuid>.jsonl`; for a Cursor transcript, any file name of safe characters).
 */
export const identityFromName = (name: string, format: ImportFormat): ImportIdentity | undefined => {
  if (format === "cursor") {
    // `<id>.jsonl` or `<id>/<id>.jsonl`; a subagent's `<parent>/subagents/<id>.jsonl` names its parent.
    const id = NodePath.basename(name, ".jsonl")
    if (!SAFE_ID.test(id)) return undefined
    const dir = NodePath.dirname(name)
    const parent = NodePath.basename(dir) === "subagents" ? NodePath.basename(NodePath.dirname(dir)) : undefined
    return {
      sessionId: `cursor-${id}`,
      threadId: id,
      ...(parent !== undefined && SAFE_ID.test(parent) ? { parentSessionId: `cursor-${parent}` } : {})
    }
  }
  const uuid = UUID.exec(NodePath.basename(name))?.[1]
  if (uuid === undefined || (format !== "codex" && format !== "claude")) return undefined
  const id = `${format}-${uuid}`
  return { sessionId: id, threadId: format === "codex" ? uuid : id }
}

/**
 * A Gemini CLI subagent session lives in `chats/<parent session id>/` beside the parent's
 * `chats/session-*.jsonl`: its identity names `gemini-<parent session id>` as its parent. Any
 * other identity is returned as it is.
 */
export const withPathParent = (identity: ImportIdentity, format: ImportFormat, name: string): ImportIdentity => {
  if (format !== "gemini" || identity.parentSessionId !== undefined) return identity
  const dir = NodePath.dirname(name)
  if (NodePath.basename(dir) === "chats" || NodePath.basename(NodePath.dirname(dir)) !== "chats") return identity
  const parent = `gemini-${NodePath.basename(dir)}`
  return parent === identity.sessionId ? identity : { ...identity, parentSessionId: parent }
}

/**
 * The identity of `codex exec --json` output that does not begin with `thread.started` (a stream
 * cut at the front, or an error before the thread started): `codex-exec-<digest>`, the digest of
 * the source's name and its first record line, so re-importing the same source (or the same
 * source grown) finds the same session.
 */
export const derivedExecIdentity = (name: string, firstLine: Uint8Array): ImportIdentity => {
  // The line ending is not part of the content: a last line that gains its newline keeps its id.
  let end = firstLine.length
  while (end > 0 && (firstLine[end - 1] === 10 || firstLine[end - 1] === 13)) end--
  const digest = createHash("sha256").update(name).update("\u0000").update(firstLine.subarray(0, end)).digest("hex")
    .slice(0, 32)
  const threadId = `exec-${digest}`
  return { sessionId: `codex-${threadId}`, threadId }
}

/** The mapper states are plain JSON by construction (their Schemas are Structs of JSON values). */
const toJson = (value: unknown): Schema.Json => {
  const json = Schema.decodeUnknownResult(Schema.Json)(value)
  return Result.isSuccess(json) ? json.success : null
}
