/**
 * The in-memory append buffer: serialised lines wait here until a durability boundary.
 * Appending is a memory copy; the buffer grows only for records larger than its capacity.
 */
import { Buffer } from "node:buffer"

/** Initial capacity and flush threshold of the append buffer (spec `MAX_WRITE_BUFFER_BYTES`). */
export const MAX_WRITE_BUFFER_BYTES = 65_536

/** A growable byte buffer of serialised, newline-terminated records. */
export interface WriteBuffer {
  /** Bytes currently buffered. */
  readonly length: () => number
  /** Appends `text` encoded as UTF-8 and returns its byte length. */
  readonly append: (text: string) => number
  /** Appends `text` encoded as UTF-8 and a `\n`, and returns the byte length of both (no concatenated copy). */
  readonly appendLine: (text: string) => number
  /** Drops everything after the first `length` bytes (rollback of a failed serialisation). */
  readonly truncate: (length: number) => void
  /** A view of the buffered bytes (valid until the next mutation). */
  readonly bytes: () => Uint8Array
  readonly clear: () => void
}

/** Creates an empty buffer with the standard capacity. */
export const makeWriteBuffer = (capacity = MAX_WRITE_BUFFER_BYTES): WriteBuffer => {
  let buf = Buffer.allocUnsafe(capacity)
  let len = 0
  const ensure = (extra: number) => {
    if (len + extra <= buf.length) return
    const next = Buffer.allocUnsafe(Math.max(buf.length * 2, len + extra))
    buf.copy(next, 0, 0, len)
    buf = next
  }
  return {
    length: () => len,
    append: (text) => {
      // UTF-8 needs at most 3 bytes per UTF-16 code unit; reserving that avoids a byteLength pass.
      ensure(text.length * 3)
      const written = buf.write(text, len, "utf8")
      len += written
      return written
    },
    appendLine: (text) => {
      ensure(text.length * 3 + 1)
      const written = buf.write(text, len, "utf8")
      buf[len + written] = 0x0a
      len += written + 1
      return written + 1
    },
    truncate: (length) => {
      len = Math.min(len, length)
    },
    bytes: () => buf.subarray(0, len),
    clear: () => {
      len = 0
      if (buf.length > MAX_WRITE_BUFFER_BYTES * 4) buf = Buffer.allocUnsafe(MAX_WRITE_BUFFER_BYTES)
    }
  }
}
