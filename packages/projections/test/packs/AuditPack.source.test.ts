/**
 * Pack verification against a file source other than a directory (`verifyPackAgainst`): files
 * described by path → size and SHA-256, as the fleet describes them. The same verdicts as for a
 * directory: matching files verify, a different size or digest is a mismatch, an absent file is
 * missing, extra files are unaccounted, an unsafe entry path is refused before the source is
 * asked anything, an edited pack fails its digest.
 */
import { assert, describe, it } from "@effect/vitest"
import type { SessionAuditPack } from "@logbook/domain"
import { AUDIT_PACK_SCHEMA_VERSION, encodeManifest, SESSION_STORE_SCHEMA_VERSION } from "@logbook/domain"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import type { PackFileFinding, PackFileSource } from "../../src/packs/AuditPack.ts"
import { packDigest, verifyPackAgainst } from "../../src/packs/AuditPack.ts"

const sha = (text: string) => createHash("sha256").update(text).digest("hex")

/** An in-memory source over `files` (path → content) that records the paths it was asked about. */
const memorySource = (files: Record<string, string>) => {
  const asked: Array<string> = []
  const source: PackFileSource<never, never> = {
    describe: (path) =>
      Effect.sync((): PackFileFinding => {
        asked.push(path)
        const content = files[path]
        return content === undefined
          ? { _tag: "Missing" }
          : { _tag: "Found", bytes: Buffer.byteLength(content), sha256: sha(content) }
      }),
    files: Effect.succeed(Object.keys(files).sort()),
    manifest: Effect.sync(() => {
      const content = files["manifest.json"]
      return content === undefined ? Option.none() : Option.some(new TextEncoder().encode(content))
    })
  }
  return { source, asked }
}

const packOf = (files: Record<string, string>): SessionAuditPack => {
  const unsigned: SessionAuditPack = {
    schema_version: AUDIT_PACK_SCHEMA_VERSION,
    session_id: "s",
    generated_at: "2026-01-01T00:00:00+00:00",
    status: "completed",
    turn_count: 1,
    event_count: 2,
    entries: Object.keys(files).sort().map((path) => ({
      path,
      bytes: Buffer.byteLength(files[path] ?? ""),
      sha256: sha(files[path] ?? "")
    }))
  }
  return { ...unsigned, pack_digest: Buffer.from(packDigest(unsigned)).toString("hex") }
}

/** The manifest of session `id` with the counters `packOf` packs. */
const manifestOf = (id: string) =>
  encodeManifest({
    session_id: id,
    schema_version: SESSION_STORE_SCHEMA_VERSION,
    created_at: "2026-01-01T00:00:00+00:00",
    updated_at: "2026-01-01T00:00:00+00:00",
    turn_count: 1,
    event_count: 2,
    status: "completed",
    in_turn: false,
    persisted_file_len: 8,
    retained_turn_base: 1
  })

const original = { "events.jsonl": "{\"a\":1}\n", "manifest.json": manifestOf("s"), "derived/x.txt": "x" }

describe("AuditPack against a file source", () => {
  it.effect("matching files verify; size, digest, missing and unaccounted are told apart", () =>
    Effect.gen(function*() {
      const pack = packOf(original)
      const clean = yield* verifyPackAgainst(pack, memorySource(original).source, { packPath: "p" })
      assert.isTrue(clean.verified)
      assert.strictEqual(clean.digest, "valid")
      const { source } = memorySource({
        "events.jsonl": "{\"a\":2}\n",
        "manifest.json": "{ }",
        "later.txt": "new"
      })
      const result = yield* verifyPackAgainst(pack, source, { packPath: "p" })
      assert.isFalse(result.verified)
      assert.deepStrictEqual(result.mismatchDetails.map((d) => [d.path, d.reason]), [
        ["events.jsonl", "digest"],
        ["manifest.json", "size"]
      ])
      assert.deepStrictEqual(result.missing, ["derived/x.txt"])
      assert.deepStrictEqual(result.unaccounted, ["later.txt"])
    }))

  it.effect("an unsafe entry path is refused before the source is asked anything", () =>
    Effect.gen(function*() {
      const pack = packOf(original)
      const hostile = { ...pack, entries: [...pack.entries, { path: "../etc/passwd", bytes: 1, sha256: sha("x") }] }
      const { asked, source } = memorySource(original)
      const error = yield* Effect.flip(verifyPackAgainst(hostile, source, { packPath: "p" }))
      assert.strictEqual(error._tag, "InvalidPack")
      assert.deepStrictEqual(asked, [])
    }))

  it.effect("a pack whose session id, status or counters are another session's does not verify, digest or not", () =>
    Effect.gen(function*() {
      const other = { ...original, "manifest.json": manifestOf("t") }
      // A pack made of another session's files, relabelled with this session's header (digest recomputed).
      const relabelled = packOf(other)
      const result = yield* verifyPackAgainst(relabelled, memorySource(other).source, { packPath: "p" })
      assert.isFalse(result.verified)
      assert.strictEqual(result.digest, "valid")
      assert.deepStrictEqual(result.mismatchDetails.map((d) => [d.path, d.reason]), [["manifest.json", "header"]])
      assert.include(result.mismatchDetails[0]?.detail ?? "", `the pack's session_id is "s", the session's "t"`)
      const { pack_digest: _, ...reference } = { ...packOf(original), status: "active" as const, event_count: 9 }
      const counters = yield* verifyPackAgainst(reference, memorySource(original).source, { packPath: "p" })
      assert.isFalse(counters.verified)
      assert.strictEqual(counters.digest, "absent")
      assert.include(
        counters.mismatchDetails[0]?.detail ?? "",
        `the pack's status is "active", the session's "completed"`
      )
      assert.include(counters.mismatchDetails[0]?.detail ?? "", "event_count is 9, the session's 2")
    }))

  it.effect("a pack edited after it was made fails its digest", () =>
    Effect.gen(function*() {
      const edited = { ...packOf(original), turn_count: 7 }
      const result = yield* verifyPackAgainst(edited, memorySource(original).source, { packPath: "p" })
      assert.isFalse(result.verified)
      assert.strictEqual(result.digest, "invalid")
    }))
})
