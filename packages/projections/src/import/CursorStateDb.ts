/**
 * Cursor IDE's chat store (docs/import.md#cursor-ide-database): the global `state.vscdb`
 * (`~/.config/Cursor/User/globalStorage/state.vscdb`, on macOS below `~/Library/Application
 * Support/Cursor`), a SQLite key-value table `cursorDiskKV (key TEXT, value BLOB)`. Each chat
 * ("composer") is `composerData:<composerId>` (JSON: `createdAt`, `lastUpdatedAt` in ms, `status`,
 * `fullConversationHeadersOnly: [{bubbleId, type}]`, or an inline `conversation` in older
 * versions) and each message `bubbleId:<composerId>:<bubbleId>` (JSON). A chat becomes one source,
 * `<db>#<composerId>`, mapped by domain's Cursor composer mapper. Older versions (2024) kept the
 * chats in a workspace `state.vscdb` (`…/User/workspaceStorage/<hash>/state.vscdb`), in VS Code's
 * `ItemTable`: `composer.composerData` (`{allComposers: [composer with its bubbles inline]}`) and the
 * chat panel's `workbench.panel.aichat.view.aichat.chatdata` (`{tabs: [{tabId, bubbles,
 * lastSendTime}]}`, bubbles `{type: "user" | "ai", id, text}`); both are read as chats too.
 *
 * **Gotchas**: a chat opened and never used (no bubble) is not a session and is passed over. A
 * bubble the headers name but the table lacks, or whose value is not JSON, is reported with its
 * position in the chat (1-based) and left out; the chat goes on. Read-only, as every SQLite source
 * (internal/sqliteFile.ts).
 */
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "@logbook/domain"
import { Clock, Effect, Predicate, Result } from "effect"
import type { DatabaseSync, SQLOutputValue } from "node:sqlite"
import { emptyReport } from "./ImportReport.ts"
import type { SkippedLine, SourceReport } from "./ImportReport.ts"
import { cursorComposer } from "./internal/formatRegistry.ts"
import type { SqliteReader } from "./internal/sqliteFile.ts"
import { columnsOf, openSqlite, tablesOf } from "./internal/sqliteFile.ts"
import { importSessionRecords, withSkipped } from "./JsonSessionImport.ts"

type Json = { readonly [key: string]: unknown }

const decoder = new TextDecoder("utf-8")

const parseValue = (value: SQLOutputValue | undefined): Result.Result<unknown, string> => {
  const text = typeof value === "string" ? value : value instanceof Uint8Array ? decoder.decode(value) : undefined
  if (text === undefined) return Result.fail("no value")
  if (exceedsJsonDepth(text)) return Result.fail(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
  return Result.try({
    try: (): unknown => JSON.parse(text),
    catch: (error) => `not JSON (${error instanceof Error ? error.message : String(error)})`
  })
}

const isObject = (v: unknown): v is Json => Predicate.isReadonlyObject(v) && !Array.isArray(v)

const ITEM_COMPOSERS = "composer.composerData"
const ITEM_CHATS = "workbench.panel.aichat.view.aichat.chatdata"

const isKeyValueTable = (db: DatabaseSync, table: string): boolean => {
  if (!tablesOf(db).has(table)) return false
  const columns = columnsOf(db, table)
  return columns.has("key") && columns.has("value")
}

/** Whether the `ItemTable` (VS Code's own) holds the chat keys of older Cursor versions. */
const hasItemChats = (db: DatabaseSync): boolean =>
  isKeyValueTable(db, "ItemTable") &&
  db.prepare("SELECT 1 FROM ItemTable WHERE key IN (?, ?) LIMIT 1").get(ITEM_COMPOSERS, ITEM_CHATS) !== undefined

/**
 * Whether a database is Cursor's: a `cursorDiskKV (key, value)` table, or an `ItemTable` holding
 * the chat keys of older versions.
 */
export const isCursorStateDb = (db: DatabaseSync): boolean => isKeyValueTable(db, "cursorDiskKV") || hasItemChats(db)

/**
 * Whether the `state.vscdb` at `path` holds Cursor chats ({@link isCursorStateDb}): how `import
 * cursor` picks, out of the workspace databases Cursor keeps (one per folder ever opened, most
 * without a chat), those worth importing. A database that cannot be opened or read counts as one,
 * so that its import says why.
 */
export const hasCursorChats = (path: string): Effect.Effect<boolean> =>
  Effect.scoped(Effect.gen(function*() {
    const reader = yield* openSqlite(path)
    return yield* reader.read("the schema", isCursorStateDb)
  })).pipe(Effect.catch(() => Effect.succeed(true)))

/** One chat as read: its composer value, its bubbles in order, and what was left out. */
interface Chat {
  readonly id: string
  readonly composer: Json
  readonly bubbles: ReadonlyArray<Json>
  readonly problems: ReadonlyArray<SkippedLine>
}

/** A chat as listed: its id, its composer value, and whether its bubbles are inline (no rows of their own). */
interface Listed {
  readonly id: string
  readonly composer: Json
  readonly inline: boolean
}

const isUsed = (bubbles: unknown): boolean => Array.isArray(bubbles) && bubbles.length > 0

/**
 * The chats of an older Cursor's `ItemTable` (see the module comment): each composer of
 * `composer.composerData` with its inline `conversation`, and each chat panel tab as a composer
 * whose `conversation` is the tab's bubbles and whose only time, `lastSendTime`, stands for both
 * `createdAt` and `lastUpdatedAt` (Cursor stored no other).
 */
const itemTableChats = (db: DatabaseSync, problems: Array<SkippedLine>): Array<Listed> => {
  const chats: Array<Listed> = []
  const rows = db.prepare("SELECT rowid AS rowid, key, value FROM ItemTable WHERE key IN (?, ?) ORDER BY key").all(
    ITEM_COMPOSERS,
    ITEM_CHATS
  )
  for (const row of rows) {
    const key = typeof row["key"] === "string" ? row["key"] : ""
    const parsed = parseValue(row["value"])
    if (Result.isFailure(parsed) || !isObject(parsed.success)) {
      const line = typeof row["rowid"] === "number" ? row["rowid"] : 0
      problems.push({ line, reason: `${key}: ${Result.isFailure(parsed) ? parsed.failure : "not a JSON object"}` })
      continue
    }
    const value = parsed.success
    if (key === ITEM_COMPOSERS) {
      const all = value["allComposers"]
      for (const composer of Array.isArray(all) ? all : []) {
        if (!isObject(composer) || typeof composer["composerId"] !== "string") continue
        if (isUsed(composer["conversation"])) chats.push({ id: composer["composerId"], composer, inline: true })
      }
    } else {
      const tabs = value["tabs"]
      for (const tab of Array.isArray(tabs) ? tabs : []) {
        if (!isObject(tab) || typeof tab["tabId"] !== "string" || !isUsed(tab["bubbles"])) continue
        const sent = tab["lastSendTime"]
        chats.push({
          id: tab["tabId"],
          composer: {
            composerId: tab["tabId"],
            ...(typeof tab["chatTitle"] === "string" ? { name: tab["chatTitle"] } : {}),
            ...(typeof sent === "number" ? { createdAt: sent, lastUpdatedAt: sent } : {}),
            conversation: tab["bubbles"]
          },
          inline: true
        })
      }
    }
  }
  return chats
}

/** The composers of the database (their keys and values), oldest first; empty chats left out. */
const listComposers = (reader: SqliteReader) =>
  reader.read("the chats", (db) => {
    const problems: Array<SkippedLine> = []
    const composers: Array<Listed> = []
    const rows = isKeyValueTable(db, "cursorDiskKV")
      ? db.prepare(
        "SELECT rowid AS rowid, key, value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'"
      ).all()
      : []
    for (const row of rows) {
      const key = typeof row["key"] === "string" ? row["key"] : ""
      const id = key.slice("composerData:".length)
      const parsed = parseValue(row["value"])
      if (Result.isFailure(parsed) || !isObject(parsed.success)) {
        const line = typeof row["rowid"] === "number" ? row["rowid"] : 0
        problems.push({ line, reason: `${key}: ${Result.isFailure(parsed) ? parsed.failure : "not a JSON object"}` })
        continue
      }
      const composer = parsed.success
      const headers = composer["fullConversationHeadersOnly"]
      const inline = composer["conversation"]
      if (isUsed(headers) || isUsed(inline)) composers.push({ id, composer, inline: !isUsed(headers) })
    }
    // A chat in both places is the newer store's (cursorDiskKV).
    const known = new Set(composers.map((c) => c.id))
    if (hasItemChats(db)) composers.push(...itemTableChats(db, problems).filter((c) => !known.has(c.id)))
    const created = (c: Json) => (typeof c["createdAt"] === "number" ? c["createdAt"] : 0)
    composers.sort((a, b) => created(a.composer) - created(b.composer) || (a.id < b.id ? -1 : 1))
    return { composers, problems }
  })

/** One chat's bubbles, in the composer's order, read in one snapshot. */
const readChat = (reader: SqliteReader, { composer, id, inline: isInline }: Listed) =>
  reader.read(`chat ${id}`, (db): Chat => {
    const problems: Array<SkippedLine> = []
    const inline = composer["conversation"]
    const headers = composer["fullConversationHeadersOnly"]
    if (isInline || !Array.isArray(headers)) {
      // Older versions keep the bubbles inline.
      const bubbles = (Array.isArray(inline) ? inline : []).flatMap((b: unknown, i): Array<Json> => {
        if (isObject(b)) return [b]
        problems.push({ line: i + 1, reason: `conversation[${i}]: not a JSON object` })
        return []
      })
      return { id, composer, bubbles, problems }
    }
    const prefix = `bubbleId:${id}:`
    const stored = new Map<string, SQLOutputValue>()
    // `;` follows `:` in code-point order: the range is exactly the keys with the prefix.
    for (
      const row of db.prepare("SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?").all(
        prefix,
        `bubbleId:${id};`
      )
    ) {
      if (typeof row["key"] === "string") stored.set(row["key"].slice(prefix.length), row["value"] ?? null)
    }
    const bubbles: Array<Json> = []
    headers.forEach((header: unknown, i) => {
      const bubbleId = isObject(header) && typeof header["bubbleId"] === "string" ? header["bubbleId"] : ""
      const value = stored.get(bubbleId)
      if (value === undefined) {
        problems.push({ line: i + 1, reason: `bubble ${bubbleId || "(no id)"}: named by the chat, not stored` })
        return
      }
      const parsed = parseValue(value)
      if (Result.isFailure(parsed) || !isObject(parsed.success)) {
        problems.push({
          line: i + 1,
          reason: `bubble ${bubbleId}: ${Result.isFailure(parsed) ? parsed.failure : "not a JSON object"}`
        })
        return
      }
      const type = isObject(header) ? header["type"] : undefined
      bubbles.push({ bubbleId, ...(type === undefined ? {} : { type }), ...parsed.success })
    })
    return { id, composer, bubbles, problems }
  })

/**
 * What identifies a bubble for the incremental digest: its id (`bubbleId`, `id` in the older chat
 * panel's tabs; Cursor rewrites bubbles in place).
 */
const bubbleDigest = (bubble: unknown): string =>
  isObject(bubble) && typeof bubble["bubbleId"] === "string"
    ? bubble["bubbleId"]
    : isObject(bubble) && typeof bubble["id"] === "string"
    ? bubble["id"]
    : JSON.stringify(bubble)

/**
 * Imports every chat of a Cursor `state.vscdb`, one source report per chat. A chat is finished
 * when Cursor has not changed it (`lastUpdatedAt`) for `idleWindowMs`; until then, while Cursor
 * still generates (`status: "generating"`), its last bubble waits for the next import.
 */
export const importCursorStateDb = (
  sessionsDir: string,
  path: string,
  idleWindowMs: number,
  dryRun: boolean,
  format: "cursor" | "auto" = "cursor"
) =>
  Effect.scoped(Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const reader = yield* openSqlite(path)
    if (!(yield* reader.read("the schema", isCursorStateDb))) {
      return [
        format === "auto"
          ? emptyReport(path, "ignored", "not a session file of a known format")
          : emptyReport(
            path,
            "failed",
            "not a Cursor state.vscdb (expected a cursorDiskKV table, or an ItemTable with Cursor's chats)"
          )
      ]
    }
    const listed = yield* listComposers(reader)
    const reports: Array<SourceReport> = []
    if (listed.problems.length > 0) {
      reports.push(withSkipped(emptyReport(path, "failed", "chats that could not be read", "cursor"), listed.problems))
    }
    for (const entry of listed.composers) {
      const { composer, id } = entry
      const source = `${path}#${id}`
      const one = Effect.gen(function*() {
        const chat = yield* readChat(reader, entry)
        const updated = typeof composer["lastUpdatedAt"] === "number"
          ? composer["lastUpdatedAt"]
          : typeof composer["createdAt"] === "number"
          ? composer["createdAt"]
          : 0
        const finished = now - updated >= idleWindowMs
        const bubbles = !finished && composer["status"] === "generating" ? chat.bubbles.slice(0, -1) : chat.bubbles
        const notSession = emptyReport(source, "failed", "not a Cursor chat (no composerId or createdAt)", "cursor")
        const report = yield* importSessionRecords(
          sessionsDir,
          source,
          // The key names the chat; older values do not repeat it.
          { format: "cursor", header: { ...composer, composerId: id }, messages: bubbles, mapper: cursorComposer },
          notSession,
          finished,
          dryRun,
          bubbleDigest
        )
        return withSkipped(report, chat.problems)
      })
      reports.push(
        yield* one.pipe(
          Effect.catch((error) => Effect.succeed(emptyReport(source, "failed", error.message, "cursor"))),
          Effect.catchDefect((defect) =>
            Effect.succeed(emptyReport(source, "failed", `unexpected error: ${String(defect)}`, "cursor"))
          )
        )
      )
    }
    return reports
  }))
