/**
 * P4 baseline: reading a log the plain way — 256 KiB `readSync` chunks (the store's stream
 * chunk size), a `StringDecoder` so multi-byte characters may straddle chunks, split on
 * `\n`, `JSON.parse` of every non-empty line.
 */
import * as Fs from "node:fs"
import { StringDecoder } from "node:string_decoder"

const CHUNK = 256 * 1024

/** Parses every line of `path`; returns the line count so the work cannot be skipped. */
export const rescanBaseline = (path: string): { readonly lines: number; readonly withType: number } => {
  const fd = Fs.openSync(path, "r")
  const chunk = Buffer.allocUnsafe(CHUNK)
  const decoder = new StringDecoder("utf8")
  let carry = ""
  let lines = 0
  let withType = 0
  const parse = (line: string) => {
    if (line.length === 0) return
    lines++
    const value: unknown = JSON.parse(line)
    if (typeof value === "object" && value !== null && "event" in value) withType++
  }
  for (;;) {
    const n = Fs.readSync(fd, chunk, 0, CHUNK, null)
    if (n === 0) break
    const parts = (carry + decoder.write(chunk.subarray(0, n))).split("\n")
    carry = parts.pop() ?? ""
    for (const part of parts) parse(part)
  }
  parse(carry + decoder.end())
  Fs.closeSync(fd)
  return { lines, withType }
}
