/**
 * Building an OpenCode database for the importer tests from JSON rows (so no binary database is
 * committed): OpenCode's `session`, `message` and `part` tables with the columns of its drizzle
 * migrations (test/fixtures/handwritten/PROVENANCE.md), `data` written as the JSON text OpenCode
 * stores, or as raw text for a row that is not JSON.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"

/** One row of an OpenCode table. */
export interface Row {
  readonly id: string
  readonly session_id?: string
  readonly message_id?: string
  readonly time_created: number
  readonly time_updated: number
  readonly data?: unknown
  /** A row whose `data` is raw text (not JSON), as a half-written row would hold. */
  readonly data_text?: string
  readonly [column: string]: unknown
}
/** The rows of an OpenCode database, per table. */
export interface Rows {
  readonly session: ReadonlyArray<Row>
  readonly message: ReadonlyArray<Row>
  readonly part: ReadonlyArray<Row>
}
/** The hand-written rows of `test/fixtures/handwritten/opencode/opencode-db.rows.json`. */
export const openCodeRows: Rows = JSON.parse(
  fs.readFileSync(
    path.join(import.meta.dirname, "..", "..", "fixtures", "handwritten", "opencode", "opencode-db.rows.json"),
    "utf8"
  )
)

// The columns of OpenCode's session, message and part tables (its drizzle migrations; PROVENANCE.md).
const SCHEMA = `
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,
  directory text NOT NULL, title text NOT NULL, version text NOT NULL, share_url text, summary_additions integer,
  summary_deletions integer, summary_files integer, summary_diffs text, revert text, permission text,
  time_created integer NOT NULL, time_updated integer NOT NULL, time_compacting integer, time_archived integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);`

/** Builds an OpenCode database at `file` from rows (WAL, as OpenCode keeps it, unless told). */
export const buildOpenCodeDb = (file: string, source: Rows, journal: "wal" | "delete" = "wal"): void => {
  const db = new DatabaseSync(file)
  db.exec(`PRAGMA journal_mode = ${journal}`)
  db.exec(SCHEMA)
  for (const s of source.session) {
    db.prepare(
      "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) " +
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ).run(
      s.id,
      String(s["project_id"]),
      typeof s["parent_id"] === "string" ? s["parent_id"] : null,
      String(s["slug"]),
      String(s["directory"]),
      String(s["title"]),
      String(s["version"]),
      s.time_created,
      s.time_updated
    )
  }
  const data = (r: Row) => r.data_text ?? JSON.stringify(r.data)
  for (const m of source.message) {
    db.prepare("INSERT INTO message VALUES (?, ?, ?, ?, ?)").run(
      m.id,
      m.session_id ?? "",
      m.time_created,
      m.time_updated,
      data(m)
    )
  }
  for (const p of source.part) {
    db.prepare("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)").run(
      p.id,
      p.message_id ?? "",
      p.session_id ?? "",
      p.time_created,
      p.time_updated,
      data(p)
    )
  }
  db.close()
}
