/**
 * Test support: the terminated lines of a log as replication compares them — where each starts,
 * its length without the newline, and the SHA-256 of its bytes.
 */
import { createHash } from "node:crypto"

/** One terminated line of a log: its byte offset, its length without the newline, its SHA-256 (hex). */
export interface LogLine {
  readonly offset: number
  readonly length: number
  readonly sha256: string
}

/** The terminated lines of `bytes`, in order; an unterminated tail is left out (never acknowledged). */
export const logLines = (bytes: Uint8Array): Array<LogLine> => {
  const lines: Array<LogLine> = []
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let at = 0
  let nl = buf.indexOf(10, at)
  while (nl !== -1) {
    const body = buf.subarray(at, nl)
    lines.push({ offset: at, length: body.length, sha256: createHash("sha256").update(body).digest("hex") })
    at = nl + 1
    nl = buf.indexOf(10, at)
  }
  return lines
}
