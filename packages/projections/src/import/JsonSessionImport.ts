/**
 * The whole-file import of a Gemini CLI JSON session (one object, rewritten by Gemini as it
 * grows): progress is counted in messages and a file whose earlier messages changed is refused.
 */
import type { ImportFormat, ThreadEvent } from "@logbook/domain"
import {
  aiderHeader,
  aiderRecords,
  clineTaskHeader,
  geminiSessionMapper,
  isLegacyCodexHeader,
  openCodeIdentity
} from "@logbook/domain"
import { EventLog, saveImportState, SessionFs } from "@logbook/store"
import { Effect, Option, Predicate } from "effect"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { parseForeignLine } from "./ForeignLines.ts"
import { emptyReport, MAX_LINES_LISTED } from "./ImportReport.ts"
import type { SkippedLine, SourceReport } from "./ImportReport.ts"
import { bump } from "./internal/counts.ts"
import type { AnyMapper } from "./internal/formatRegistry.ts"
import { mappers, withPathParent } from "./internal/formatRegistry.ts"
import { prepare } from "./internal/importAdmission.ts"
import { openCodeExportDigest } from "./internal/openCodeDigest.ts"
import { atSourceTime } from "./internal/sourceClock.ts"
import { isMessageEvent } from "./JsonlImport.ts"

/**
 * The forms of a whole-file JSON session: a Gemini CLI `{sessionId, projectHash, …, messages}`;
 * a legacy Codex rollout saved as one array `[{id, timestamp, instructions}, …items]` or as
 * `{session: {id, timestamp, instructions}, items}`; a Cline / Roo Code task's `ui_messages.json`
 * (an array of `{ts, type: say|ask}`; the header names the task directory, the agent is Roo Code
 * when asked for or when the path is below Roo's `rooveterinaryinc.roo-cline` storage). The header
 * is mapped first, then each item.
 */
export interface JsonSession {
  readonly format: "gemini" | "codex" | "cline" | "roo" | "aider" | "opencode" | "cursor"
  readonly header: unknown
  readonly messages: ReadonlyArray<unknown>
  /** The mapper, when not the format's default one (a Cursor IDE chat, not a transcript). */
  readonly mapper?: AnyMapper
}

/** The name of Aider's chat history, kept in each repository it ran in. */
export const AIDER_HISTORY = ".aider.chat.history.md"

/**
 * An Aider history as records: the header names `aider-<digest of the file's path>`; while the
 * file is live its last record may still grow, so it waits until the file is finished.
 */
const aiderSessionOf = (bytes: Uint8Array, path: string, finished: boolean): JsonSession => {
  const records = aiderRecords(new TextDecoder("utf-8").decode(bytes))
  const id = createHash("sha256").update(path).digest("hex").slice(0, 16)
  return { format: "aider", header: aiderHeader(id), messages: finished ? records : records.slice(0, -1) }
}

const jsonSessionOf = (
  value: unknown,
  path: string,
  format: ImportFormat | "auto"
): JsonSession | undefined => {
  if (Array.isArray(value)) {
    const [first, ...items] = value
    if (NodePath.basename(path) === "ui_messages.json" && value.every(isUiMessage)) {
      const agent = format === "roo" || (format !== "cline" && path.includes("roo-cline")) ? "roo" : "cline"
      return {
        format: agent,
        header: clineTaskHeader(agent, NodePath.basename(NodePath.dirname(path))),
        messages: value
      }
    }
    return isLegacyCodexHeader(first) ? { format: "codex", header: first, messages: items } : undefined
  }
  if (!Predicate.isReadonlyObject(value)) return undefined
  const { messages, ...header } = value
  if (Array.isArray(messages) && geminiSessionMapper.identify(header) !== undefined) {
    return { format: "gemini", header, messages }
  }
  if (Array.isArray(messages) && openCodeIdentity(value["info"]) !== undefined) {
    return { format: "opencode", header: value["info"], messages }
  }
  const session = value["session"]
  const items = value["items"]
  if (Predicate.isReadonlyObject(session) && Array.isArray(items)) {
    const legacy = { instructions: null, ...session }
    return isLegacyCodexHeader(legacy) ? { format: "codex", header: legacy, messages: items } : undefined
  }
  return undefined
}

const isUiMessage = (m: unknown): boolean =>
  Predicate.isReadonlyObject(m) && typeof m["ts"] === "number" && (m["type"] === "say" || m["type"] === "ask")

/** How many events of a JSON session are appended together. */
const JSON_SESSION_BATCH = 512

/** Whole-file JSON sessions larger than this are refused (they are parsed in one piece). */
export const MAX_JSON_SESSION_BYTES = 256 * 1024 * 1024

/**
 * Imports a Gemini CLI session stored as one JSON object (`{sessionId, projectHash, …, messages}`).
 * Gemini rewrites the whole file as a session grows, so progress is counted in messages: the
 * digest covers the messages already imported (each as its JSON text), and a file whose earlier
 * messages changed is refused like a changed prefix.
 */
export const importJsonSession = (
  sessionsDir: string,
  path: string,
  format: ImportFormat | "auto",
  size: number,
  finished = false,
  dryRun = false
) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const notSession = format === "auto"
      ? emptyReport(path, "ignored", "not a session file of a known format")
      : format === "codex"
      ? emptyReport(
        path,
        "failed",
        "not a legacy Codex rollout (expected [{id, timestamp, instructions}, …items])",
        "codex"
      )
      : format === "opencode"
      ? emptyReport(path, "failed", "not an `opencode export` session (expected {info, messages})", "opencode")
      : format === "aider"
      ? emptyReport(path, "failed", `not an Aider chat history (${AIDER_HISTORY})`, "aider")
      : format === "cline" || format === "roo"
      ? emptyReport(path, "failed", "not a Cline / Roo Code ui_messages.json (expected [{ts, type, say|ask}])", format)
      : emptyReport(path, "failed", "not a Gemini CLI session (expected sessionId, projectHash and messages)", "gemini")
    if (size > MAX_JSON_SESSION_BYTES) {
      return emptyReport(path, "failed", `larger than ${MAX_JSON_SESSION_BYTES} bytes, too large for a JSON session`)
    }
    const bytes = yield* fs.readFileNoFollow(path)
    if (Option.isNone(bytes)) return emptyReport(path, "failed", "no such file")
    const aider = NodePath.basename(path) === AIDER_HISTORY
    const parsed = aider ? undefined : parseForeignLine(bytes.value, false)
    const value = parsed?._tag === "Records" && parsed.values.length === 1 ? parsed.values[0] : undefined
    const session = aider ? aiderSessionOf(bytes.value, path, finished) : jsonSessionOf(value, path, format)
    if (session === undefined || (format !== "auto" && format !== session.format)) return notSession
    // OpenCode updates finished messages in place (internal/openCodeDigest.ts); exports were
    // digested by their JSON text before.
    return yield* session.format === "opencode"
      ? importSessionRecords(sessionsDir, path, session, notSession, finished, dryRun, openCodeExportDigest, wholeText)
      : importSessionRecords(sessionsDir, path, session, notSession, finished, dryRun)
  })

/**
 * A store session's report with the rows or files its store left out added as skipped lines
 * (at most {@link MAX_LINES_LISTED} listed, all counted).
 */
export const withSkipped = (report: SourceReport, problems: ReadonlyArray<SkippedLine>): SourceReport =>
  problems.length === 0 ? report : {
    ...report,
    lines_skipped: [...report.lines_skipped, ...problems].slice(0, MAX_LINES_LISTED),
    lines_skipped_count: report.lines_skipped_count + problems.length
  }

/**
 * How a message of a whole-session source is fingerprinted for the incremental digest: its JSON
 * text (a file rewritten as it grows), or, for sources whose earlier records legitimately change
 * in place (OpenCode's database), what identifies it.
 */
export type MessageDigest = (message: unknown) => string

const wholeText: MessageDigest = (message) => JSON.stringify(message)

/**
 * Imports one whole session given as a header and its messages (a JSON file's, or one assembled
 * from a database): the messages already imported are checked against the saved digest, the new
 * ones mapped and appended under the source's clock, and the import state saved.
 */
export const importSessionRecords = (
  sessionsDir: string,
  path: string,
  session: JsonSession,
  notSession: SourceReport,
  finished: boolean,
  dryRun: boolean,
  digestOf: MessageDigest = wholeText,
  formerDigestOf?: MessageDigest
) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const { header, messages } = session
    const found = session.format
    const mapper = session.mapper ?? mappers[found]
    const named = mapper.identify(header)
    if (named === undefined) return notSession
    const identity = withPathParent(named, found, path)
    const prepared = yield* prepare(sessionsDir, identity, found, mapper)
    const base: SourceReport = {
      ...emptyReport(path, "unchanged", "", found),
      session: identity.sessionId,
      parent_session: identity.parentSessionId,
      reason: undefined
    }
    const refused = (reason: string): SourceReport => ({ ...base, status: "refused", reason })
    if ("refusal" in prepared) return { ...base, status: prepared.refusal.status, reason: prepared.refusal.reason }
    const previous = prepared.previous
    const done = Option.isSome(previous) ? previous.value.offset : 0
    const hash = createHash("sha256")
    // A state saved while the format's digest was another one (`formerDigestOf`) is accepted too;
    // the state saved by this import uses `digestOf`.
    const former = formerDigestOf === undefined ? undefined : createHash("sha256")
    const samePrefix = (saved: string): boolean =>
      hash.copy().digest("hex") === saved || former?.copy().digest("hex") === saved
    const records: Array<unknown> = Option.isNone(previous) ? [header] : []
    for (let i = 0; i < messages.length; i++) {
      if (i === done && Option.isSome(previous) && !samePrefix(previous.value.prefix_sha256)) {
        return refused("messages imported before have changed since; nothing was merged")
      }
      hash.update(digestOf(messages[i]))
      if (former !== undefined && formerDigestOf !== undefined) former.update(formerDigestOf(messages[i]))
      if (i >= done) records.push(messages[i])
    }
    if (Option.isSome(previous)) {
      if (messages.length < done) {
        return refused(`fewer messages than were already imported (${done})`)
      }
      if (messages.length === done) {
        if (!samePrefix(previous.value.prefix_sha256)) {
          return refused("messages imported before have changed since; nothing was merged")
        }
        if (!finished || prepared.run.cursor()?.finished === true) return base
      }
    }
    const run = prepared.run
    let written = 0
    let conversation = 0
    const skipped: Record<string, number> = {}
    // The log is written under the source's clock (see JsonlImport): its times are the session's.
    yield* Effect.scoped(Effect.gen(function*() {
      const batch: Array<ThreadEvent> = []
      let firstTs: string | undefined
      const mapped: Array<ReadonlyArray<ThreadEvent>> = []
      for (const record of records) {
        const step = run.step(record)
        firstTs ??= run.cursor()?.firstTs
        if (step.skipped !== undefined) bump(skipped, step.skipped)
        mapped.push(step.events)
      }
      if (finished) mapped.push(run.finish())
      for (const events of mapped) conversation += events.filter(isMessageEvent).length
      if (dryRun) {
        written = mapped.reduce((n, events) => n + events.length, 0)
        return
      }
      const lastTs = run.cursor()?.lastTs
      const log = yield* atSourceTime(
        firstTs ?? lastTs,
        EventLog.open({
          sessionsDir,
          sessionId: identity.sessionId,
          maxEvents: 0,
          maxBytes: 0,
          requireExclusive: true,
          barrierAtTurnBoundary: false
        })
      )
      for (const events of mapped) {
        for (const event of events) batch.push(event)
        if (batch.length >= JSON_SESSION_BATCH) {
          const part = batch.splice(0)
          yield* atSourceTime(lastTs, log.appendAll(part))
          written += part.length
        }
      }
      yield* atSourceTime(lastTs, log.appendAll(batch))
      written += batch.length
      yield* atSourceTime(lastTs, log.complete)
    }))
    const outcome = {
      ...base,
      status: Option.isNone(previous) ? "created" : "updated",
      events_written: written,
      records_read: records.length,
      records_mapped: records.length - Object.values(skipped).reduce((n, k) => n + k, 0),
      records_skipped: skipped,
      open_turn_usage: run.openUsage(),
      warnings: Option.isNone(previous) && conversation === 0
        ? [`${path} yields no message (no prompt and no assistant text): is it a ${found} session file?`]
        : [],
      dry_run: dryRun
    } satisfies SourceReport
    if (dryRun) return outcome
    const after = yield* fs.lstat(prepared.paths.events)
    yield* saveImportState(prepared.paths, {
      version: 1,
      format: found,
      source: path,
      offset: messages.length,
      prefix_sha256: hash.digest("hex"),
      lines: 0,
      records: messages.length,
      log_length: Option.isSome(after) ? after.value.size : 0,
      mapper_state: run.snapshot()
    })
    return outcome
  })
