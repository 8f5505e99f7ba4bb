/**
 * Sessions written by hand, byte for byte, the way another tool (or an older Logbook, or a crash)
 * could have left them: a manifest with chosen fields and an optional log, without going through
 * the store. Used to test readers against states the store itself would never produce.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** What {@link plantSession} writes besides the manifest. */
export interface PlantOptions {
  /** Manifest fields replacing the defaults (a completed session with 1 turn and 3 events). */
  readonly manifest?: Record<string, unknown>
  /** The exact bytes of `events.jsonl`; no log file when absent. */
  readonly events?: string | Uint8Array
  /** Marks the session pinned (`retention-pin.json`). */
  readonly pinned?: boolean
}

/** The manifest fields a planted session starts from. */
export const plantedManifest = (name: string): Record<string, unknown> => ({
  session_id: name,
  schema_version: 1,
  created_at: "2026-01-01T00:00:00+00:00",
  updated_at: "2026-01-01T00:00:00+00:00",
  turn_count: 1,
  event_count: 3,
  status: "completed"
})

/**
 * Writes session directory `name` directly below `sessionsDir` (0700, files 0600): a compact
 * `manifest.json` and, when given, `events.jsonl` and a pin. Returns the session directory.
 */
export const plantSession = (sessionsDir: string, name: string, options: PlantOptions = {}): string => {
  const dir = path.join(sessionsDir, name)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const manifest = { ...plantedManifest(name), ...options.manifest }
  fs.writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(manifest), { mode: 0o600 })
  if (options.events !== undefined) fs.writeFileSync(path.join(dir, "events.jsonl"), options.events, { mode: 0o600 })
  if (options.pinned === true) {
    fs.writeFileSync(
      path.join(dir, "retention-pin.json"),
      JSON.stringify({ reason: "test", pinned_at: "2026-01-01T00:00:00+00:00" }),
      { mode: 0o600 }
    )
  }
  return dir
}
