/**
 * OpenCode's own session stores (docs/import.md#opencode): the SQLite database
 * (`~/.local/share/opencode/opencode.db`, tables `session`, `message`, `part`; `message.data` and
 * `part.data` hold the JSON of a message's info and of a part without their ids) and the older
 * JSON tree (`storage/session/<projectID>/<id>.json`, `storage/message/<sessionID>/<id>.json`,
 * `storage/part/<messageID>/<id>.json`). Each session is assembled into the shape
 * `opencode export` writes (`{info, messages: [{info, parts}]}`, ids put back), so the one
 * OpenCode mapper of domain maps all three sources alike.
 *
 * **Gotchas**: messages are in OpenCode's order (`time_created`, then id; in the tree, by id, which
 * OpenCode makes ascending in time), parts by id. A row or file that is not a JSON object is
 * reported with its position and left out; its session goes on. Reading the database never
 * writes it (internal/sqliteFile.ts).
 */
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "@logbook/domain"
import { SessionFs } from "@logbook/store"
import { Clock, Effect, Option, Predicate, Result } from "effect"
import * as NodePath from "node:path"
import type { DatabaseSync, SQLOutputValue } from "node:sqlite"
import { emptyReport } from "./ImportReport.ts"
import type { SkippedLine, SourceReport } from "./ImportReport.ts"
import { openCodeMessageDigest } from "./internal/openCodeDigest.ts"
import type { SqliteReader } from "./internal/sqliteFile.ts"
import { columnsOf, openSqlite, tablesOf } from "./internal/sqliteFile.ts"
import { importSessionRecords, withSkipped } from "./JsonSessionImport.ts"

type Json = { readonly [key: string]: unknown }

/** One message as `opencode export` writes it. */
export interface AssembledMessage {
  readonly info: Json
  readonly parts: ReadonlyArray<Json>
}

/** One OpenCode session assembled from its store, with what could not be read of it. */
export interface AssembledSession {
  /** `ses_…`, OpenCode's session id. */
  readonly id: string
  /** When OpenCode last changed the session (epoch ms): a session idle long enough is finished. */
  readonly updatedMs: number
  readonly info: Json
  readonly messages: ReadonlyArray<AssembledMessage>
  /** Rows or files left out (the row id, or 0 for a file, with the reason naming it). */
  readonly problems: ReadonlyArray<SkippedLine>
}

/** A session listed in a store, before its messages are read. */
export interface ListedSession {
  readonly id: string
  readonly updatedMs: number
  readonly info: Json
}

const parseObject = (text: string): Result.Result<Json, string> => {
  if (exceedsJsonDepth(text)) return Result.fail(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
  const parsed = Result.try({
    try: (): unknown => JSON.parse(text),
    catch: (error) => (error instanceof Error ? error.message : String(error))
  })
  if (Result.isFailure(parsed)) return Result.fail(`not JSON (${parsed.failure})`)
  return Predicate.isReadonlyObject(parsed.success) && !Array.isArray(parsed.success)
    ? Result.succeed(parsed.success)
    : Result.fail("not a JSON object")
}

const text = (v: SQLOutputValue | undefined): string | undefined => (typeof v === "string" ? v : undefined)

const millis = (v: SQLOutputValue | undefined): number =>
  typeof v === "number" && Number.isFinite(v) ? v : typeof v === "bigint" ? Number(v) : 0

const rowId = (v: SQLOutputValue | undefined): number => Math.max(0, Math.floor(millis(v)))

/** Whether a database is OpenCode's: `session`, `message` and `part` tables, messages keeping `data`. */
export const isOpenCodeDatabase = (db: DatabaseSync): boolean => {
  const tables = tablesOf(db)
  if (!tables.has("session") || !tables.has("message") || !tables.has("part")) return false
  const message = columnsOf(db, "message")
  const part = columnsOf(db, "part")
  return message.has("data") && message.has("session_id") && part.has("data") && part.has("message_id")
}

/** The sessions of an OpenCode database, oldest first (with the session's info as an export has it). */
export const listDatabaseSessions = (reader: SqliteReader) =>
  reader.read(
    "the sessions",
    (db) =>
      db.prepare("SELECT * FROM session ORDER BY time_created, id").all().flatMap((row): Array<ListedSession> => {
        const id = text(row["id"])
        if (id === undefined) return []
        const info: Json = {
          id,
          ...(text(row["project_id"]) === undefined ? {} : { projectID: text(row["project_id"]) }),
          ...(text(row["parent_id"]) === undefined ? {} : { parentID: text(row["parent_id"]) }),
          ...(text(row["directory"]) === undefined ? {} : { directory: text(row["directory"]) }),
          ...(text(row["title"]) === undefined ? {} : { title: text(row["title"]) }),
          ...(text(row["version"]) === undefined ? {} : { version: text(row["version"]) }),
          time: { created: millis(row["time_created"]), updated: millis(row["time_updated"]) }
        }
        return [{ id, updatedMs: millis(row["time_updated"]), info }]
      })
  )

/** One session of an OpenCode database with its messages and parts, read in one snapshot. */
export const readDatabaseSession = (reader: SqliteReader, listed: ListedSession) =>
  reader.read(`session ${listed.id}`, (db): AssembledSession => {
    const problems: Array<SkippedLine> = []
    const parts = new Map<string, Array<Json>>()
    const partRows = db.prepare(
      "SELECT rowid AS rowid, id, message_id, data FROM part WHERE session_id = ? " +
        "ORDER BY message_id, id"
    ).all(listed.id)
    for (const row of partRows) {
      const id = text(row["id"]) ?? ""
      const messageId = text(row["message_id"]) ?? ""
      const data = parseObject(text(row["data"]) ?? "")
      if (Result.isFailure(data)) {
        problems.push({ line: rowId(row["rowid"]), reason: `part ${id} of message ${messageId}: ${data.failure}` })
        continue
      }
      const list = parts.get(messageId) ?? []
      list.push({ ...data.success, id, sessionID: listed.id, messageID: messageId })
      parts.set(messageId, list)
    }
    const messages: Array<AssembledMessage> = []
    const messageRows = db.prepare(
      "SELECT rowid AS rowid, id, data FROM message WHERE session_id = ? " +
        "ORDER BY time_created, id"
    ).all(listed.id)
    for (const row of messageRows) {
      const id = text(row["id"]) ?? ""
      const data = parseObject(text(row["data"]) ?? "")
      if (Result.isFailure(data)) {
        const lost = parts.get(id)?.length ?? 0
        problems.push({
          line: rowId(row["rowid"]),
          reason: `message ${id}: ${data.failure}${lost > 0 ? ` (its ${lost} parts left out too)` : ""}`
        })
        continue
      }
      messages.push({ info: { ...data.success, id, sessionID: listed.id }, parts: parts.get(id) ?? [] })
    }
    return { ...listed, messages, problems }
  })

const jsonNamesIn = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const info = yield* fs.lstat(dir)
    if (Option.isNone(info) || info.value.type !== "Directory") return []
    return (yield* fs.listDir(dir)).filter((name) => name.endsWith(".json")).sort()
  })

const readJsonFile = (path: string, problems: Array<SkippedLine>) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const bytes = yield* fs.readFileNoFollow(path)
    if (Option.isNone(bytes)) {
      problems.push({ line: 0, reason: `${path}: vanished while read` })
      return undefined
    }
    const parsed = parseObject(new TextDecoder("utf-8").decode(bytes.value))
    if (Result.isFailure(parsed)) {
      problems.push({ line: 0, reason: `${path}: ${parsed.failure}` })
      return undefined
    }
    return parsed.success
  })

/** The sessions of a legacy `storage/` tree (every project's), by id. */
export const listStorageSessions = (storage: string) =>
  Effect.gen(function*() {
    const root = NodePath.join(storage, "session")
    const listed: Array<ListedSession & { readonly problems: ReadonlyArray<SkippedLine> }> = []
    for (const project of yield* jsonDirsIn(root)) {
      for (const name of yield* jsonNamesIn(NodePath.join(root, project))) {
        const problems: Array<SkippedLine> = []
        const info = yield* readJsonFile(NodePath.join(root, project, name), problems)
        // OpenCode's own migration takes the ids from the file names, not the JSON.
        const id = NodePath.basename(name, ".json")
        const time = Predicate.isReadonlyObject(info?.["time"]) ? info["time"] : {}
        const updated = typeof time["updated"] === "number" ? time["updated"] : 0
        listed.push({ id, updatedMs: updated, info: { ...info, id, projectID: project }, problems })
      }
    }
    return listed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  })

const jsonDirsIn = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const info = yield* fs.lstat(dir)
    if (Option.isNone(info) || info.value.type !== "Directory") return []
    const names = yield* fs.listDir(dir)
    const dirs: Array<string> = []
    for (const name of names) {
      const child = yield* fs.lstat(NodePath.join(dir, name))
      if (Option.isSome(child) && child.value.type === "Directory") dirs.push(name)
    }
    return dirs
  })

/** One session of a legacy `storage/` tree with its messages and parts. */
export const readStorageSession = (
  storage: string,
  listed: ListedSession & { readonly problems: ReadonlyArray<SkippedLine> }
) =>
  Effect.gen(function*() {
    const problems: Array<SkippedLine> = [...listed.problems]
    const messages: Array<AssembledMessage> = []
    const messageDir = NodePath.join(storage, "message", listed.id)
    for (const name of yield* jsonNamesIn(messageDir)) {
      const id = NodePath.basename(name, ".json")
      const info = yield* readJsonFile(NodePath.join(messageDir, name), problems)
      if (info === undefined) continue
      const partDir = NodePath.join(storage, "part", id)
      const parts: Array<Json> = []
      for (const partName of yield* jsonNamesIn(partDir)) {
        const part = yield* readJsonFile(NodePath.join(partDir, partName), problems)
        if (part !== undefined) {
          parts.push({ ...part, id: NodePath.basename(partName, ".json"), sessionID: listed.id, messageID: id })
        }
      }
      messages.push({ info: { ...info, id, sessionID: listed.id }, parts })
    }
    return {
      id: listed.id,
      updatedMs: listed.updatedMs,
      info: listed.info,
      messages,
      problems
    } satisfies AssembledSession
  })

/**
 * Whether a message is complete: a user message as soon as it is written, an assistant message
 * once OpenCode stamped `time.completed` or an error on it (while it streams its parts change).
 */
export const isCompleteMessage = (message: AssembledMessage): boolean => {
  if (message.info["role"] !== "assistant") return true
  const time = message.info["time"]
  return (Predicate.isReadonlyObject(time) && typeof time["completed"] === "number") ||
    message.info["error"] !== undefined
}

/** Where an OpenCode store is: its database file, or its legacy `storage/` directory. */
export type OpenCodeStoreKind = "database" | "storage"

/**
 * Imports every session of an OpenCode store, one source report per session (its path is
 * `<store>#<session id>`, its skipped lines the rows or files left out). A session is finished when
 * OpenCode has not changed it for `idleWindowMs`; until then its trailing messages still being
 * written (an assistant message without `time.completed`) wait for the next import.
 */
export const importOpenCodeStore = (
  sessionsDir: string,
  path: string,
  kind: OpenCodeStoreKind,
  idleWindowMs: number,
  dryRun: boolean,
  format: "opencode" | "auto" = "opencode"
) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const reports: Array<SourceReport> = []
    const one = (session: AssembledSession) =>
      Effect.gen(function*() {
        const finished = now - session.updatedMs >= idleWindowMs
        const pending = finished ? -1 : session.messages.findIndex((m) => !isCompleteMessage(m))
        const messages = pending < 0 ? session.messages : session.messages.slice(0, pending)
        const source = `${path}#${session.id}`
        const notSession = emptyReport(source, "failed", "not an OpenCode session (no ses_ id or time)", "opencode")
        const report = yield* importSessionRecords(
          sessionsDir,
          source,
          { format: "opencode", header: session.info, messages },
          notSession,
          finished,
          dryRun,
          openCodeMessageDigest
        )
        return withSkipped(report, session.problems)
      })
    // One session that cannot be read or written is reported failed; the others go on.
    const isolated = <E extends { readonly message: string }, R>(
      id: string,
      effect: Effect.Effect<SourceReport, E, R>
    ) =>
      effect.pipe(
        Effect.catch((error) => Effect.succeed(emptyReport(`${path}#${id}`, "failed", error.message, "opencode"))),
        Effect.catchDefect((defect) =>
          Effect.succeed(emptyReport(`${path}#${id}`, "failed", `unexpected error: ${String(defect)}`, "opencode"))
        )
      )
    if (kind === "database") {
      yield* Effect.scoped(Effect.gen(function*() {
        const reader = yield* openSqlite(path)
        if (!(yield* reader.read("the schema", isOpenCodeDatabase))) {
          reports.push(
            format === "auto"
              ? emptyReport(path, "ignored", "not a session file of a known format")
              : emptyReport(path, "failed", "not an OpenCode database (expected session, message and part tables)")
          )
          return
        }
        for (const listed of yield* listDatabaseSessions(reader)) {
          reports.push(yield* isolated(listed.id, Effect.flatMap(readDatabaseSession(reader, listed), one)))
        }
      }))
    } else {
      for (const listed of yield* listStorageSessions(path)) {
        reports.push(yield* isolated(listed.id, Effect.flatMap(readStorageSession(path, listed), one)))
      }
    }
    return reports
  })
