/**
 * Splits a stream of byte chunks into raw lines with their file offsets, in bounded memory:
 * only the bytes of the line currently being assembled are carried between chunks.
 */
import { Stream } from "effect"

/** One raw line of a log file: its starting byte offset and its bytes, trailing `\n` included when present. */
export interface RawLine {
  readonly offset: number
  readonly bytes: Uint8Array
}

const NEWLINE = 10

/** A stateful splitter: feed chunks in order, then `end()` once to get a final unterminated line. */
export interface LineSplitter {
  readonly push: (chunk: Uint8Array) => ReadonlyArray<RawLine>
  readonly end: () => ReadonlyArray<RawLine>
}

/** Creates a splitter whose first byte sits at `startOffset` in the file. */
export const makeLineSplitter = (startOffset = 0): LineSplitter => {
  let carry: Array<Uint8Array> = []
  let carryLen = 0
  let pos = startOffset
  const takeCarry = (tail: Uint8Array): Uint8Array => {
    if (carryLen === 0) return tail
    const out = new Uint8Array(carryLen + tail.length)
    let at = 0
    for (const part of carry) {
      out.set(part, at)
      at += part.length
    }
    out.set(tail, at)
    carry = []
    carryLen = 0
    return out
  }
  return {
    push: (chunk) => {
      const lines: Array<RawLine> = []
      let start = 0
      let nl = chunk.indexOf(NEWLINE, start)
      while (nl !== -1) {
        const bytes = takeCarry(chunk.subarray(start, nl + 1))
        lines.push({ offset: pos, bytes })
        pos += bytes.length
        start = nl + 1
        nl = chunk.indexOf(NEWLINE, start)
      }
      if (start < chunk.length) {
        // Copy: the chunk buffer may be reused by the reader.
        const rest = chunk.slice(start)
        carry.push(rest)
        carryLen += rest.length
      }
      return lines
    },
    end: () => {
      if (carryLen === 0) return []
      const bytes = takeCarry(new Uint8Array(0))
      const line = { offset: pos, bytes }
      pos += bytes.length
      return [line]
    }
  }
}

/** Turns a stream of chunks into a stream of raw lines (the final line may lack its `\n`). */
export const splitLines = (startOffset = 0) => <E, R>(chunks: Stream.Stream<Uint8Array, E, R>) =>
  Stream.mapAccum(
    chunks,
    () => makeLineSplitter(startOffset),
    (splitter, chunk) => [splitter, splitter.push(chunk)] as const,
    { onHalt: (splitter) => splitter.end() }
  )
