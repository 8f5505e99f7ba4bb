/**
 * Puts a session directory into a fleet database exactly as docs/fleet.md's schema describes a
 * replicated session, without the replicator: one `sessions` row (origin host, manifest as
 * `jsonb`), epoch 0, one `events` row per newline-terminated line of `events.jsonl` (offset,
 * length and SHA-256 of the line without its newline, the raw bytes, the decoded JSON), and one
 * `files` row per other regular file (links skipped). Tests of fleet queries use it to set up a
 * fleet independently of replication.
 */
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

const parsedOrNull = (bytes: Uint8Array): unknown => {
  const text = new TextDecoder().decode(bytes)
  const parsed = Effect.runSync(Effect.option(Effect.try(() => JSON.parse(text) as unknown)))
  return parsed._tag === "Some" ? parsed.value : null
}

/** The regular files below `dir` (relative, slash-separated), real directories walked, links skipped. */
const regularFiles = (dir: string, relative = ""): Array<string> =>
  fs.readdirSync(path.join(dir, relative), { withFileTypes: true }).flatMap((entry) => {
    const child = relative === "" ? entry.name : `${relative}/${entry.name}`
    if (entry.isDirectory()) return regularFiles(dir, child)
    return entry.isFile() ? [child] : []
  })

/** Options of {@link copySessionToFleet}. */
export interface FleetCopyOptions {
  /** The `session_id` in the fleet (default: the directory's name). */
  readonly sessionId?: string
  readonly originHost?: string
}

/** Copies the session directory `dir` into the fleet tables (see the module comment). */
export const copySessionToFleet = (
  dir: string,
  options: FleetCopyOptions = {}
): Effect.Effect<void, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sessionId = options.sessionId ?? path.basename(dir)
    const manifestPath = path.join(dir, "manifest.json")
    const manifest = fs.existsSync(manifestPath) ? parsedOrNull(fs.readFileSync(manifestPath)) : null
    yield* sql`insert into sessions ${
      sql.insert({
        session_id: sessionId,
        origin_host: options.originHost ?? "test-host",
        manifest: manifest === null ? null : JSON.stringify(manifest)
      })
    }`
    yield* sql`insert into session_epochs ${sql.insert({ session_id: sessionId, epoch: 0 })}`
    const log = fs.readFileSync(path.join(dir, "events.jsonl"))
    const rows: Array<Record<string, unknown>> = []
    let start = 0
    for (let i = log.indexOf(10); i >= 0; i = log.indexOf(10, start)) {
      const line = new Uint8Array(log.subarray(start, i))
      const event = parsedOrNull(line)
      rows.push({
        session_id: sessionId,
        epoch: 0,
        byte_offset: start,
        length: line.length,
        sha256: sha256(line),
        line,
        event: event === null ? null : JSON.stringify(event)
      })
      start = i + 1
    }
    for (let i = 0; i < rows.length; i += 100) {
      const [first, ...rest] = rows.slice(i, i + 100)
      if (first !== undefined) yield* sql`insert into events ${sql.insert([first, ...rest])}`
    }
    for (const file of regularFiles(dir).filter((f) => f !== "events.jsonl")) {
      const content = new Uint8Array(fs.readFileSync(path.join(dir, ...file.split("/"))))
      yield* sql`insert into files ${
        sql.insert({ session_id: sessionId, path: file, size: content.length, sha256: sha256(content), content })
      }`
    }
    yield* sql`insert into replication_cursors ${sql.insert({ session_id: sessionId, epoch: 0, byte_offset: start })}`
  }).pipe(Effect.orDie)
