/**
 * Building a Cursor `state.vscdb` for the importer tests from the hand-written JSON rows (no binary
 * committed): Cursor's `ItemTable` and `cursorDiskKV` tables, each value written as its JSON text,
 * raw text for a row that is not JSON, and the legacy chat's values as BLOBs (as Cursor may store them).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"

/** The older chat of the rows, whose bubbles are inline. */
export const LEGACY = "0b1c2d3e-4f50-4a6b-9c7d-8e9f0a1b2c3d"

/** One `cursorDiskKV` row. */
export interface KvRow {
  readonly key: string
  readonly value?: unknown
  /** A value that is not JSON (a half-written row). */
  readonly value_text?: string
}
/** The hand-written rows of `test/fixtures/handwritten/cursor-vscdb/state-vscdb.rows.json`. */
export const cursorRows: ReadonlyArray<KvRow> = JSON.parse(
  fs.readFileSync(
    path.join(import.meta.dirname, "..", "..", "fixtures", "handwritten", "cursor-vscdb", "state-vscdb.rows.json"),
    "utf8"
  )
)
/** Cursor's tables (as its global state.vscdb declares them); the legacy chat's value as a BLOB. */
export const buildVscdb = (file: string, source: ReadonlyArray<KvRow> = cursorRows): void => {
  const db = new DatabaseSync(file)
  db.exec("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
  db.exec("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
  for (const row of source) {
    const text = row.value_text ?? JSON.stringify(row.value)
    db.prepare("INSERT INTO cursorDiskKV VALUES (?, ?)").run(
      row.key,
      row.key.includes(LEGACY) ? new TextEncoder().encode(text) : text
    )
  }
  db.close()
}
