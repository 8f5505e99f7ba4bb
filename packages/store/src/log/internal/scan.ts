/**
 * The authoritative rebuild's I/O: streams `events.jsonl` once, classifies every line cheaply
 * and folds it through domain's scan reducer (`scanLine`), the same fold the read-only inspector
 * uses. Memory stays bounded by one chunk plus the longest line (and the turn index).
 */
import type { LogScan } from "@logbook/domain"
import { classifyLine, scanLine } from "@logbook/domain"
import { Effect, Stream } from "effect"
import { Buffer, isUtf8 } from "node:buffer"
import type { SessionFsApi } from "../../fs/SessionFs.ts"
import type { StoreIoError } from "../../fs/StoreError.ts"
import { splitLines } from "../LineSplitter.ts"

/**
 * The text of a raw line without its `\n`, or the raw bytes when they are not valid UTF-8
 * (the classifier then skips them). Validating natively and slicing the buffer is the fastest
 * route to a string on the rescan hot path (bench P4).
 */
export const lineText = (bytes: Uint8Array): string | Uint8Array => {
  if (!isUtf8(bytes)) return bytes
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 10 ? bytes.length - 1 : bytes.length
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8", 0, end)
}

/**
 * Folds the lines of `[0, fileLen)` of `path` into `initial`. `now` stamps turns whose
 * `turn.started` carries no recorded timestamp.
 */
export const scanLog = (
  fs: SessionFsApi,
  path: string,
  fileLen: number,
  initial: LogScan,
  now: string,
  onProgress?: (bytes: number) => void
): Effect.Effect<LogScan, StoreIoError> =>
  Effect.suspend(() => {
    let scan = initial
    let lastReport = 0
    return fs.stream(path, { start: 0, end: fileLen }).pipe(
      splitLines(0),
      // One effect per chunk of lines, not per line: the per-line work stays plain code.
      Stream.runForEachArray((batch) =>
        Effect.sync(() => {
          for (const line of batch) {
            const span = { start: line.offset, end: line.offset + line.bytes.length }
            scan = scanLine(scan, classifyLine(lineText(line.bytes)), span, now)
            if (onProgress !== undefined && line.offset - lastReport >= 16 * 1024 * 1024) {
              lastReport = line.offset
              onProgress(line.offset)
            }
          }
        })
      ),
      Effect.map(() => scan)
    )
  })
