/**
 * Reading another agent's SQLite database (OpenCode's `opencode.db`, Cursor's `state.vscdb`)
 * without disturbing the agent that owns it (docs/import.md#opencode, "Reading the database"). `node:sqlite` is
 * Node's own SQLite (no native dependency); it is looked up only when a database is imported,
 * so Node versions without it still run every other importer and get a readable error here.
 *
 * The database is opened read-only (`SQLITE_OPEN_READONLY`: no write transaction, no schema
 * change, never a checkpoint), each read (one session, say) runs in one read transaction (a
 * consistent snapshot, released at once), and the connection is closed when the import of the
 * file ends. Measured with a second process holding a
 * write transaction: in WAL mode (OpenCode's) the read never waits and sees the last commit; in
 * rollback-journal mode a writer's EXCLUSIVE lock makes the read wait up to
 * {@link SQLITE_BUSY_TIMEOUT_MS}, then fail as "locked" (reported, the other sources go on).
 *
 * **Gotchas**: `immutable=1` and copying the file were rejected: immutable ignores the WAL (the
 * newest commits) and a hot journal, so it can read torn pages; a copy of the main file without
 * its `-wal` is just as stale. Like any reader of a WAL database, SQLite may create the `-shm` /
 * `-wal` files beside it when they are missing.
 */
import { Data, Effect } from "effect"
import type { DatabaseSync } from "node:sqlite"

/** How long a read waits for another process's write lock before it is reported as locked. */
export const SQLITE_BUSY_TIMEOUT_MS = 2000

/** A SQLite source that cannot be read: `node:sqlite` missing, locked, corrupt, not a database. */
export class SqliteSourceError extends Data.TaggedError("SqliteSourceError")<{
  readonly operation: string
  readonly path: string
  readonly reason: string
}> {
  override get message(): string {
    return `${this.operation} ${this.path}: ${this.reason}`
  }
}

type SqliteModule = typeof import("node:sqlite")

const sqliteModule = (): SqliteModule | undefined => {
  const lookup: ((id: "node:sqlite") => SqliteModule | undefined) | undefined = process.getBuiltinModule
  return lookup === undefined ? undefined : lookup.call(process, "node:sqlite")
}

const reasonOf = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  const code = typeof error === "object" && error !== null && "errcode" in error ? error.errcode : undefined
  // SQLITE_BUSY / SQLITE_LOCKED: another process holds a write lock.
  if (code === 5 || code === 6) return `${message} (another process is writing it; run the import again later)`
  // SQLITE_CORRUPT / SQLITE_NOTADB: half-written or not a database at all.
  if (code === 11 || code === 26) return `${message} (a damaged or half-written file, or not SQLite)`
  return message
}

/** An open read-only database: each `read` runs in a read transaction of its own. */
export interface SqliteReader {
  readonly read: <A>(what: string, f: (db: DatabaseSync) => A) => Effect.Effect<A, SqliteSourceError>
}

/**
 * Opens `path` read-only for the scope (closed when it ends). Failures (no `node:sqlite`, locked,
 * corrupt, a failing query) are a {@link SqliteSourceError} naming the file and what was read.
 */
export const openSqlite = (path: string) =>
  Effect.gen(function*() {
    const sqlite = sqliteModule()
    if (sqlite === undefined) {
      return yield* new SqliteSourceError({
        operation: "open",
        path,
        reason: `this Node (${process.version}) has no node:sqlite; reading a SQLite database needs Node 22.13 or later`
      })
    }
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => new sqlite.DatabaseSync(path, { readOnly: true, timeout: SQLITE_BUSY_TIMEOUT_MS }),
        catch: (error) => new SqliteSourceError({ operation: "open", path, reason: reasonOf(error) })
      }),
      (db) => Effect.sync(() => db.close())
    )
    const read = <A>(what: string, f: (db: DatabaseSync) => A) =>
      Effect.try({
        try: () => {
          db.exec("BEGIN")
          return f(db)
        },
        catch: (error) => new SqliteSourceError({ operation: `read ${what} of`, path, reason: reasonOf(error) })
      }).pipe(
        // A read transaction has nothing to commit: ending it only releases the snapshot.
        Effect.ensuring(Effect.sync(() => {
          if (db.isTransaction) db.exec("ROLLBACK")
        }))
      )
    return { read } satisfies SqliteReader
  })

/** The tables of a database (to recognise whose it is). */
export const tablesOf = (db: DatabaseSync): ReadonlySet<string> =>
  new Set(
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().flatMap((row) =>
      typeof row["name"] === "string" ? [row["name"]] : []
    )
  )

/** The columns of a table. */
export const columnsOf = (db: DatabaseSync, table: string): ReadonlySet<string> =>
  new Set(
    db.prepare("SELECT name FROM pragma_table_info(?)").all(table).flatMap((row) =>
      typeof row["name"] === "string" ? [row["name"]] : []
    )
  )
