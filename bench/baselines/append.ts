/**
 * P1 baseline: what a host would write by hand to persist the same events — `JSON.stringify`
 * of each envelope into a 64 KiB buffer, `writeSync` whenever it fills, one `fdatasync` at
 * the end (the counterpart of Logbook's single flush).
 */
import type { ThreadEvent } from "@logbook/domain"
import * as Fs from "node:fs"
import { plainLine } from "../lib/events.ts"
import type { Sample } from "../lib/measure.ts"

const CHUNK = 65_536

/**
 * Appends `first` durably (untimed, as Logbook's `turn.started` is), then times the appends
 * of `events` (`append`) and the final write + fdatasync (`total` includes both).
 */
export const appendBaseline = (path: string, first: ThreadEvent, events: ReadonlyArray<ThreadEvent>): Sample => {
  const fd = Fs.openSync(path, "a", 0o600)
  Fs.writeSync(fd, `${plainLine(first)}\n`)
  Fs.fdatasyncSync(fd)
  const buffer = Buffer.allocUnsafe(CHUNK)
  let length = 0
  const t0 = performance.now()
  for (const event of events) {
    const line = `${plainLine(event)}\n`
    const bytes = Buffer.byteLength(line)
    if (length + bytes > CHUNK) {
      Fs.writeSync(fd, buffer, 0, length)
      length = 0
    }
    if (bytes > CHUNK) Fs.writeSync(fd, line)
    else length += buffer.write(line, length)
  }
  const t1 = performance.now()
  if (length > 0) Fs.writeSync(fd, buffer, 0, length)
  Fs.fdatasyncSync(fd)
  const t2 = performance.now()
  Fs.closeSync(fd)
  return { total: t2 - t0, append: t1 - t0 }
}
