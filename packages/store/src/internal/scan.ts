/**
 * The authoritative rebuild (docs/log.md#rescan): streams `events.jsonl` once, classifies every
 * line cheaply and folds the accepted ones through the same lifecycle reducer the append
 * path uses. Memory stays bounded by one chunk plus the longest line.
 */
import type { LogState, TurnEntry } from "@logbook/domain"
import { applyLifecycleEvent, classifyLine, eventTimestamp } from "@logbook/domain"
import { Effect, Stream } from "effect"
import { Buffer, isUtf8 } from "node:buffer"
import { splitLines } from "../LineSplitter.ts"
import { SessionFs } from "../SessionFs.ts"
import type { StoreIoError } from "../StoreError.ts"

/** What a scan found: the final lifecycle state, the closed turn entries, and line statistics. */
export interface ScanResult {
  readonly state: LogState
  readonly closed: Array<TurnEntry>
  readonly lines: number
  readonly skipped: number
  readonly firstTimestamp: string | undefined
}

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
 * Scans `[0, fileLen)` of `path`, starting from `initial` (whose turn count encodes the
 * retained turn base). `now` stamps turns whose `turn.started` carries no recorded timestamp.
 */
export const scanLog = (
  path: string,
  fileLen: number,
  initial: LogState,
  now: string,
  onProgress?: (bytes: number) => void
): Effect.Effect<ScanResult, StoreIoError, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const closed: Array<TurnEntry> = []
    let state = initial
    let lines = 0
    let skipped = 0
    let firstTimestamp: string | undefined
    let lastReport = 0
    yield* fs.stream(path, { start: 0, end: fileLen }).pipe(
      splitLines(0),
      // One effect per chunk of lines, not per line: the per-line work stays plain code.
      Stream.runForEachArray((batch) =>
        Effect.sync(() => {
          for (const line of batch) {
            lines++
            const cls = classifyLine(lineText(line.bytes))
            if (cls._tag === "Skip") {
              skipped++
              continue
            }
            let ts = now
            if (cls.lifecycle === "turn_started") {
              // Lifecycle lines were fully decoded by the classifier; reuse that envelope.
              const recorded = cls.envelope === undefined ? undefined : eventTimestamp(cls.envelope.event)
              if (recorded !== undefined) ts = recorded
              if (firstTimestamp === undefined) firstTimestamp = recorded
            }
            const t = applyLifecycleEvent(state, cls.lifecycle, {
              start: line.offset,
              end: line.offset + line.bytes.length
            }, ts)
            state = t.state
            if (t.closed !== undefined) closed.push(t.closed)
            if (onProgress !== undefined && line.offset - lastReport >= 16 * 1024 * 1024) {
              lastReport = line.offset
              onProgress(line.offset)
            }
          }
        })
      )
    )
    return { state, closed, lines, skipped, firstTimestamp }
  })
