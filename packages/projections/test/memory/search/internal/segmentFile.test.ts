/**
 * A segment's header (docs/search.md#segments) is trusted only when it checks out: its CRC, and
 * then its structure — sessions covering the documents in order, every block inside the file,
 * every number a non-negative integer. A header that passes its CRC but breaks one of these rules
 * (a writer's bug, a file edited by hand with its checksum fixed) is rejected, never used.
 */
import { assert, describe, it } from "@effect/vitest"
import { crc32 } from "../../../../src/memory/search/internal/crc32.ts"
import { SearchIndex, sessionDocs } from "../../../../src/memory/search/internal/searchIndex.ts"
import {
  decodeHeader,
  encodeSegment,
  footerRange,
  headerLength
} from "../../../../src/memory/search/internal/segmentFile.ts"

const segment = (): Uint8Array => {
  const index = new SearchIndex()
  for (let s = 0; s < 3; s++) {
    const docs = [0, 1, 2].map((i) => ({
      chunk: i,
      offset: i * 10,
      createdAt: 1_000 + i,
      text: `login test ${s} ${i}`
    }))
    index.put(sessionDocs(`s${s}`, `sig${s}`, docs))
  }
  return encodeSegment("facts", index.pack())
}

// The header JSON of an encoded segment, and a function decoding an edited one with a fresh CRC.
const headerOf = (bytes: Uint8Array) => {
  const [from, to] = footerRange(bytes.length)
  const footer = headerLength(bytes.subarray(from, to))
  if (footer === undefined) throw new Error("no footer")
  const text = new TextDecoder().decode(bytes.subarray(from - footer.length, from))
  const decodeEdited = (edit: (h: Record<string, unknown>) => void) => {
    const h = JSON.parse(text)
    edit(h)
    const edited = new TextEncoder().encode(JSON.stringify(h))
    // The size the header records stays the file's: only the structure is wrong.
    const size = bytes.length - footer.length + edited.length
    h.size = String(size).padStart(16, "0")
    const final = new TextEncoder().encode(JSON.stringify(h))
    return decodeHeader("facts", bytes.length - footer.length + final.length, final, crc32(final))
  }
  return { footer, text, decodeEdited }
}

// Row `i` of the header's list `key` (a test edit fails loudly when the row is not there).
const row = (h: Record<string, unknown>, key: string, i: number): Array<unknown> => {
  const list = h[key]
  const r = Array.isArray(list) ? list[i] : undefined
  if (!Array.isArray(r)) throw new Error(`no row ${i} of ${key}`)
  return r
}

describe("segment header", () => {
  it("decodes what encodeSegment wrote: sessions in order, blocks inside the file", () => {
    const bytes = segment()
    const { footer, text } = headerOf(bytes)
    const [from] = footerRange(bytes.length)
    const header = decodeHeader("facts", bytes.length, bytes.subarray(from - footer.length, from), footer.crc)
    assert.isDefined(header)
    assert.deepStrictEqual(header?.sessions.map((s) => [s.name, s.sig, s.start, s.count]), [
      ["s0", "sig0", 0, 3],
      ["s1", "sig1", 3, 3],
      ["s2", "sig2", 6, 3]
    ])
    assert.strictEqual(header?.docs, 9)
    for (const ref of [...(header?.blocks ?? []), ...(header?.docBlocks ?? []), ...(header?.snippetBlocks ?? [])]) {
      assert.isTrue(ref.offset + ref.length <= bytes.length - footer.length - 16)
    }
    assert.isTrue(text.includes("\"sessions\""))
    // The wrong scope or a CRC that does not match is not a header.
    assert.isUndefined(decodeHeader("history", bytes.length, bytes.subarray(from - footer.length, from), footer.crc))
    assert.isUndefined(
      decodeHeader("facts", bytes.length, bytes.subarray(from - footer.length, from), (footer.crc + 1) >>> 0)
    )
  })

  it("rejects a header whose checksum holds but whose structure does not", () => {
    const { decodeEdited } = headerOf(segment())
    assert.isDefined(decodeEdited(() => {}), "an unedited header re-encoded decodes")
    const edits: ReadonlyArray<readonly [string, (h: Record<string, unknown>) => void]> = [
      ["sessions leave a gap", (h) => (row(h, "sessions", 1)[2] = 4)],
      ["sessions cover fewer documents", (h) => (row(h, "sessions", 2)[3] = 2)],
      ["a session name is not a string", (h) => (row(h, "sessions", 0)[0] = 7)],
      ["a session row is not an array", (h) => {
        if (Array.isArray(h.sessions)) h.sessions[0] = { name: "s0" }
      }],
      ["a count is negative", (h) => (row(h, "sessions", 0)[3] = -3)],
      ["a dictionary block ends past the header", (h) => (row(h, "blocks", 0)[2] = 1e9)],
      ["a dictionary block has no first term", (h) => (row(h, "blocks", 0)[0] = 1)],
      ["a document block offset is fractional", (h) => (row(h, "docBlocks", 0)[0] = 1.5)],
      ["a snippet block is missing", (h) => (h.snippetBlocks = [])],
      ["a block list is not a list", (h) => (h.docBlocks = "none")]
    ]
    for (const [what, edit] of edits) assert.isUndefined(decodeEdited(edit), what)
  })
})
