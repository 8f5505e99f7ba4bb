/**
 * The audit-pack file format: the entry-path rules, the byte order of paths, decoding a
 * reference-format pack, schema drift, unsafe or duplicated entries, and the pretty encoder
 * round-tripping through the decoder.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import type { SessionAuditPack } from "../../src/packs/AuditPack.ts"
import {
  comparePathBytes,
  decodeAuditPackText,
  encodeAuditPack,
  entryPathProblem,
  packDigestText
} from "../../src/packs/AuditPack.ts"

const sha = (c: string) => c.repeat(64)

/** A pack as the reference writes it (pretty JSON, no digest, no signature). */
const referenceText = `{
  "schema_version": 1,
  "session_id": "sess-1",
  "generated_at": "2026-10-03T09:12:44.123456789+00:00",
  "status": "completed",
  "turn_count": 2,
  "event_count": 9,
  "entries": [
    {
      "path": "events.jsonl",
      "bytes": 412,
      "sha256": "${sha("a")}"
    },
    {
      "path": "index/turns.json",
      "bytes": 120,
      "sha256": "${sha("b")}"
    }
  ]
}`

const decode = (text: string) => decodeAuditPackText(text, "pack.json")

describe("AuditPack format", () => {
  it("accepts plain relative paths and names what is wrong with every other one", () => {
    for (const ok of ["events.jsonl", "derived/notes/a b.txt", "..hidden", "a.", "ü/ß"]) {
      assert.isUndefined(entryPathProblem(ok), ok)
    }
    const bad: ReadonlyArray<readonly [string, string]> = [
      ["", "empty path"],
      ["/etc/passwd", "absolute path"],
      ["a\\b", "backslash in path"],
      ["../x", "'..' component"],
      ["a/../../b", "'..' component"],
      ["./x", "'.' component"],
      ["a//b", "empty path component"],
      ["a/", "empty path component"],
      ["a\0b", "NUL byte in path"]
    ]
    for (const [path, reason] of bad) assert.strictEqual(entryPathProblem(path), reason, JSON.stringify(path))
  })

  it("orders paths by UTF-8 bytes, as the reference sorts them", () => {
    // UTF-16 order puts U+1F600 (surrogate 0xD83D) before U+FF5E; UTF-8 (EF.. < F0..) puts it after.
    const paths = ["\u{1F600}", "\uFF5E", "b", "a/b", "a", "A"]
    assert.deepStrictEqual([...paths].sort(comparePathBytes), ["A", "a", "a/b", "b", "\uFF5E", "\u{1F600}"])
  })

  it("decodes a reference-format pack and encodes it back to the same bytes", () => {
    const decoded = decode(referenceText)
    assert.isTrue(Result.isSuccess(decoded))
    const pack = Result.getOrThrow(decoded)
    assert.isUndefined(pack.pack_digest)
    assert.strictEqual(encodeAuditPack(pack), referenceText)
  })

  it("round-trips the additive digest and signature keys", () => {
    const pack: SessionAuditPack = {
      ...Result.getOrThrow(decode(referenceText)),
      pack_digest: sha("c"),
      signature: { algorithm: "ed25519", key_id: "0123456789abcdef", value: "c2ln" }
    }
    assert.deepStrictEqual(Result.getOrThrow(decode(encodeAuditPack(pack))), pack)
  })

  it("refuses another schema version naming it, a wrong shape, unsafe and duplicate entries", () => {
    const json = JSON.parse(referenceText)
    const reasonOf = (value: unknown) => {
      const r = decode(typeof value === "string" ? value : JSON.stringify(value))
      return Result.isFailure(r) ? r.failure.reason : "accepted"
    }
    assert.strictEqual(reasonOf({ ...json, schema_version: 2 }), "unsupported schema_version 2 (expected 1)")
    assert.strictEqual(reasonOf({ ...json, schema_version: "1" }), "unsupported schema_version \"1\" (expected 1)")
    assert.strictEqual(reasonOf("[1]"), "not a JSON object")
    assert.strictEqual(reasonOf("{"), "not a JSON object")
    assert.notStrictEqual(reasonOf({ ...json, entries: [{ path: "a", bytes: -1, sha256: sha("a") }] }), "accepted")
    assert.notStrictEqual(reasonOf({ ...json, entries: [{ path: "a", bytes: 1, sha256: sha("A") }] }), "accepted")
    assert.include(reasonOf({ ...json, entries: [{ path: "../x", bytes: 1, sha256: sha("a") }] }), "unsafe entry path")
    assert.include(reasonOf({ ...json, entries: [json.entries[0], json.entries[0]] }), "duplicate entry path")
  })

  it("digests the id, status, counters and entries, but not generated_at or the signature", () => {
    const pack = Result.getOrThrow(decode(referenceText))
    const base = packDigestText(pack)
    assert.strictEqual(packDigestText({ ...pack, generated_at: "later", pack_digest: sha("d") }), base)
    assert.notStrictEqual(packDigestText({ ...pack, turn_count: 3 }), base)
    assert.notStrictEqual(packDigestText({ ...pack, status: "active" }), base)
    assert.notStrictEqual(packDigestText({ ...pack, session_id: "other" }), base)
    assert.notStrictEqual(packDigestText({ ...pack, entries: pack.entries.slice(1) }), base)
  })
})
