/**
 * P2 baseline: the turn-commit protocol with raw sync syscalls. Lines are buffered in memory;
 * at `turn.completed` the bytes are written and fdatasync'ed, then `index/turns.json` and
 * `manifest.json` are replaced atomically — the same files, in the same order, with the same
 * content shape as Logbook's durability barrier.
 */
import type { ThreadEvent } from "@logbook/domain"
import { EVENT_SCHEMA_VERSION } from "@logbook/domain"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { atomicWriteSync } from "./atomic.ts"

interface Entry {
  turn_number: number
  start_offset: number
  end_offset: number
  event_count: number
  ts: string
}

/** A hand-written session writer; `append` returns after the barrier when the event ends a turn. */
export interface RawSession {
  readonly append: (event: ThreadEvent) => void
  readonly close: () => void
}

/** Opens `dir/events.jsonl` for append and keeps the turn index in memory. */
export const openRawSession = (dir: string, sessionId: string): RawSession => {
  Fs.mkdirSync(Path.join(dir, "index"), { recursive: true, mode: 0o700 })
  const fd = Fs.openSync(Path.join(dir, "events.jsonl"), "a", 0o600)
  const turnsPath = Path.join(dir, "index", "turns.json")
  const manifestPath = Path.join(dir, "manifest.json")
  const createdAt = new Date().toISOString()
  const entries: Array<Entry> = []
  let open: Entry | undefined
  let pending: Array<string> = []
  let offset = 0
  let turnCount = 0
  let eventCount = 0
  const barrier = () => {
    if (pending.length > 0) {
      Fs.writeSync(fd, pending.join(""))
      pending = []
    }
    Fs.fdatasyncSync(fd)
    atomicWriteSync(turnsPath, JSON.stringify({ entries: open === undefined ? entries : [...entries, open] }))
    atomicWriteSync(
      manifestPath,
      JSON.stringify({
        session_id: sessionId,
        schema_version: 1,
        created_at: createdAt,
        updated_at: new Date().toISOString(),
        turn_count: turnCount,
        event_count: eventCount,
        status: "active",
        in_turn: open !== undefined,
        persisted_file_len: offset,
        retained_turn_base: 1
      })
    )
  }
  return {
    append: (event) => {
      const line = `${JSON.stringify({ schema_version: EVENT_SCHEMA_VERSION, event })}\n`
      const start = offset
      offset += Buffer.byteLength(line)
      pending.push(line)
      eventCount++
      if (event.type === "turn.started") {
        open = {
          turn_number: turnCount + 1,
          start_offset: start,
          end_offset: offset,
          event_count: 1,
          ts: event.context?.timestamp ?? new Date().toISOString()
        }
      } else if (open !== undefined) {
        open.end_offset = offset
        open.event_count++
      }
      if (event.type === "turn.completed" || event.type === "turn.failed") {
        if (open !== undefined) {
          entries.push(open)
          turnCount = open.turn_number
          open = undefined
        }
        barrier()
      }
    },
    close: () => Fs.closeSync(fd)
  }
}
