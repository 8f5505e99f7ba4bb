/**
 * P7 baseline: the raw cost of what a pack must do to each file — open it, read it in 64 KiB
 * `readSync` chunks into one reused buffer, feed `node:crypto` SHA-256 — with nothing else.
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"

const CHUNK = 64 * 1024

/** SHA-256 of every file in `paths`; returns the bytes read so the work cannot be skipped. */
export const sha256Baseline = (paths: ReadonlyArray<string>): number => {
  const buffer = Buffer.allocUnsafe(CHUNK)
  let total = 0
  for (const path of paths) {
    const fd = Fs.openSync(path, "r")
    const hash = createHash("sha256")
    for (;;) {
      const n = Fs.readSync(fd, buffer, 0, CHUNK, null)
      if (n === 0) break
      hash.update(buffer.subarray(0, n))
      total += n
    }
    hash.digest("hex")
    Fs.closeSync(fd)
  }
  return total
}
