/**
 * Audit packs end to end over real session directories: a clean round trip, every kind of
 * tampering (a byte of a file, a deleted file, an added file, a planted link, an edited pack,
 * a wrong key), entry paths that could leave the session rejected before anything is read,
 * self-exclusion, determinism, schema drift, reference-format packs, crash safety of the write,
 * and packs of a session that is still open.
 */
import { assert, describe, it } from "@effect/vitest"
import type { SessionAuditPack } from "@logbook/domain"
import { encodeAuditPack, InvalidPack } from "@logbook/domain"
import { auditPackPath, FaultController, SessionFs, SessionRegistry } from "@logbook/store"
import { appendAll, ev, nodeLayer, openLog, pathsOf, sessionsRoot, turn } from "@logbook/testkit"
import { Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { execFileSync } from "node:child_process"
import { createPrivateKey, createPublicKey } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  createAuditPack,
  packDigest,
  readAuditPack,
  readSessionAuditPack,
  verifyAuditPack,
  writeAuditPack
} from "../../src/packs/AuditPack.ts"
import { generateSigningKeyPair } from "../../src/packs/PackSigning.ts"

const testRoot = sessionsRoot("projections")

/** A completed two-turn session `s` below `root`, written through the store, plus a nested derived file. */
const recordSession = (root: string, id = "s") =>
  Effect.scoped(Effect.gen(function*() {
    const log = yield* openLog(root, id)
    yield* appendAll(log, [ev.threadStarted(), ...turn("one"), ...turn("two"), ev.threadCompleted()])
    yield* log.complete
  })).pipe(Effect.tap(() =>
    Effect.sync(() => {
      const derived = pathsOf(root, id).derivedDir
      fs.mkdirSync(path.join(derived, "notes"), { recursive: true })
      fs.writeFileSync(path.join(derived, "notes", "a.txt"), "alpha\n")
    })
  ))

const packFile = (root: string, id = "s") => auditPackPath(pathsOf(root, id))

const readPackJson = (file: string): Record<string, unknown> => JSON.parse(fs.readFileSync(file, "utf8"))

const writePackJson = (file: string, value: unknown) => fs.writeFileSync(file, JSON.stringify(value, null, 2))

const withPack = (pack: SessionAuditPack, entries: SessionAuditPack["entries"]): SessionAuditPack => ({
  ...pack,
  entries
})

describe("AuditPack", () => {
  it.effect("a fresh pack of a session verifies, lists every regular file sorted, and is written 0600", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root)
      const { pack, path: written } = yield* writeAuditPack(root, "s")
      assert.strictEqual(written, packFile(root))
      assert.strictEqual(fs.statSync(written).mode & 0o777, 0o600)
      assert.strictEqual(fs.statSync(path.dirname(written)).mode & 0o777, 0o700)
      const paths = pack.entries.map((e) => e.path)
      assert.deepStrictEqual(paths, [...paths].sort())
      for (const expected of ["events.jsonl", "manifest.json", "index/turns.json", "derived/notes/a.txt"]) {
        assert.include(paths, expected)
      }
      const events = fs.readFileSync(path.join(pathsOf(root, "s").dir, "events.jsonl"))
      assert.strictEqual(pack.entries.find((e) => e.path === "events.jsonl")?.bytes, events.length)
      assert.strictEqual(pack.status, "completed")
      assert.strictEqual(pack.turn_count, 2)
      assert.match(pack.pack_digest ?? "", /^[0-9a-f]{64}$/)
      const text = fs.readFileSync(written, "utf8")
      assert.strictEqual(text, encodeAuditPack(pack))
      assert.include(text, "\n  \"entries\": [\n    {\n      \"path\": ")
      const { pack: read } = yield* readSessionAuditPack(root, "s")
      assert.deepStrictEqual(read, pack)
      const result = yield* verifyAuditPack(root, "s", read)
      assert.isTrue(result.verified)
      assert.deepStrictEqual([result.mismatches, result.missing, result.unaccounted], [[], [], []])
      assert.strictEqual(result.digest, "valid")
      assert.strictEqual(result.signature, "absent")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("leaves out every file named audit-pack.json, at any depth", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root)
      const dir = pathsOf(root, "s").dir
      fs.mkdirSync(path.join(dir, "derived", "old"))
      fs.writeFileSync(path.join(dir, "derived", "old", "audit-pack.json"), "{}")
      fs.writeFileSync(path.join(dir, "audit-pack.json"), "{}")
      yield* writeAuditPack(root, "s")
      const { pack } = yield* writeAuditPack(root, "s")
      assert.isFalse(pack.entries.some((e) => e.path.endsWith("audit-pack.json")))
      const result = yield* verifyAuditPack(root, "s", pack)
      assert.isTrue(result.verified)
      assert.deepStrictEqual(result.unaccounted, [])
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("two packs of an unchanged session differ only in generated_at", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root)
      const first = (yield* createAuditPack(root, "s")).pack
      yield* TestClock.adjust("90 minutes")
      const second = (yield* createAuditPack(root, "s")).pack
      assert.notStrictEqual(first.generated_at, second.generated_at)
      assert.deepStrictEqual({ ...second, generated_at: first.generated_at }, first)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a one-byte change is a mismatch with its reason, and the pack no longer verifies", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root)
      const { pack } = yield* writeAuditPack(root, "s")
      const note = path.join(pathsOf(root, "s").derivedDir, "notes", "a.txt")
      fs.writeFileSync(note, "alphA\n")
      const events = path.join(pathsOf(root, "s").dir, "events.jsonl")
      fs.appendFileSync(events, "x")
      const result = yield* verifyAuditPack(root, "s", pack)
      assert.isFalse(result.verified)
      assert.deepStrictEqual(result.mismatches, ["derived/notes/a.txt", "events.jsonl"])
      assert.deepStrictEqual(result.mismatchDetails.map((d) => d.reason), ["digest", "size"])
      assert.deepStrictEqual(result.missing, [])
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a deleted file is missing, not mismatched; an added file is only informational", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root)
      const { pack } = yield* writeAuditPack(root, "s")
      const dir = pathsOf(root, "s").dir
      fs.writeFileSync(path.join(dir, "derived", "added.json"), "{}")
      const added = yield* verifyAuditPack(root, "s", pack)
      assert.isTrue(added.verified)
      assert.deepStrictEqual(added.unaccounted, ["derived/added.json"])
      fs.rmSync(path.join(dir, "derived", "notes"), { recursive: true })
      fs.rmSync(path.join(dir, "index", "turns.json"))
      const deleted = yield* verifyAuditPack(root, "s", pack)
      assert.isFalse(deleted.verified)
      assert.deepStrictEqual(deleted.missing, ["derived/notes/a.txt", "index/turns.json"])
      assert.deepStrictEqual(deleted.mismatches, [])
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a link planted after packing, in a file's place or on its path, is a mismatch and never followed", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* testRoot
      yield* recordSession(root)
      const { pack } = yield* writeAuditPack(root, "s")
      const dir = pathsOf(root, "s").dir
      // Same bytes outside, so following the link would make the digest match.
      const note = path.join(dir, "derived", "notes", "a.txt")
      fs.copyFileSync(note, path.join(outside, "a.txt"))
      fs.rmSync(note)
      fs.symlinkSync(path.join(outside, "a.txt"), note)
      fs.cpSync(path.join(dir, "index"), path.join(outside, "index"), { recursive: true })
      fs.rmSync(path.join(dir, "index"), { recursive: true })
      fs.symlinkSync(path.join(outside, "index"), path.join(dir, "index"))
      const result = yield* verifyAuditPack(root, "s", pack)
      assert.isFalse(result.verified)
      assert.deepStrictEqual(result.mismatches, ["derived/notes/a.txt", "index/turns.json"])
      assert.deepStrictEqual(result.mismatchDetails.map((d) => d.reason), ["link", "link"])
      assert.deepStrictEqual(result.unaccounted, [])
    }).pipe(Effect.provide(nodeLayer())))

  for (const bad of ["../x", "/etc/passwd", "a/../../b", "a\\b", "", "./events.jsonl", "index//turns.json", "a/"]) {
    it.effect(`the entry path ${JSON.stringify(bad)} is rejected before any file is read`, () =>
      Effect.gen(function*() {
        const { root } = yield* testRoot
        const { pack } = yield* Effect.provide(
          recordSession(root).pipe(Effect.andThen(createAuditPack(root, "s"))),
          nodeLayer()
        )
        const forged = withPack(pack, [...pack.entries, { path: bad, bytes: 0, sha256: "0".repeat(64) }])
        const controller = yield* FaultController
        yield* controller.reset
        const exit = yield* Effect.exit(verifyAuditPack(root, "s", forged))
        assert.isTrue(Exit.isFailure(exit))
        assert.deepStrictEqual(yield* controller.trace, [])
        const error = Exit.isFailure(exit) ? exit.cause : undefined
        assert.include(String(error), "unsafe entry path")
        // The same pack as a file is refused on read, before any verification.
        const file = path.join(root, "forged.json")
        fs.writeFileSync(file, encodeAuditPack(forged))
        const read = yield* Effect.flip(readAuditPack(file))
        assert.instanceOf(read, InvalidPack)
      }).pipe(
        Effect.provide(Layer.provideMerge(Layer.fresh(SessionRegistry.layer), SessionFs.layerFaulty()))
      ))
  }

  it.effect("an edited pack is caught by its digest (and a changed counter by the manifest), or an entry rewritten to match a tampered file", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root)
      yield* writeAuditPack(root, "s")
      const file = packFile(root)
      const original = readPackJson(file)
      writePackJson(file, { ...original, turn_count: 7 })
      const counters = yield* verifyAuditPack(root, "s", yield* readAuditPack(file))
      assert.isFalse(counters.verified)
      assert.strictEqual(counters.digest, "invalid")
      // The counter is also checked against the session's manifest.
      assert.deepStrictEqual(counters.mismatchDetails.map((d) => [d.path, d.reason]), [["manifest.json", "header"]])
      // Tamper a file and fix its entry so the file matches the pack: only the digest notices.
      const note = path.join(pathsOf(root, "s").derivedDir, "notes", "a.txt")
      fs.writeFileSync(note, "forged\n")
      const forged = yield* createAuditPack(root, "s")
      const entries = (original["entries"] as Array<Record<string, unknown>>).map((e) =>
        e["path"] === "derived/notes/a.txt"
          ? forged.pack.entries.find((f) => f.path === "derived/notes/a.txt")
          : e
      )
      writePackJson(file, { ...original, entries })
      const rewritten = yield* verifyAuditPack(root, "s", yield* readAuditPack(file))
      assert.deepStrictEqual(rewritten.mismatches, [])
      assert.strictEqual(rewritten.digest, "invalid")
      assert.isFalse(rewritten.verified)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a signed pack verifies with its public key and fails with another key, a re-digested edit or none", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root)
      const mine = generateSigningKeyPair()
      const theirs = generateSigningKeyPair()
      const { pack } = yield* writeAuditPack(root, "s", { signingKey: createPrivateKey(mine.privateKey) })
      assert.strictEqual(pack.signature?.algorithm, "ed25519")
      const read = yield* readAuditPack(packFile(root))
      const good = yield* verifyAuditPack(root, "s", read, { publicKey: createPublicKey(mine.publicKey) })
      assert.isTrue(good.verified)
      assert.strictEqual(good.signature, "valid")
      const unchecked = yield* verifyAuditPack(root, "s", read)
      assert.strictEqual(unchecked.signature, "unchecked")
      assert.isTrue(unchecked.verified)
      const wrongKey = yield* verifyAuditPack(root, "s", read, { publicKey: createPublicKey(theirs.publicKey) })
      assert.strictEqual(wrongKey.signature, "invalid")
      assert.isFalse(wrongKey.verified)
      // Someone edits the counters and recomputes the digest: the signature no longer matches.
      const edited = { ...read, event_count: read.event_count + 1 }
      const forged = { ...edited, pack_digest: Buffer.from(packDigest(edited)).toString("hex") }
      const reDigested = yield* verifyAuditPack(root, "s", forged, { publicKey: createPublicKey(mine.publicKey) })
      assert.strictEqual(reDigested.digest, "valid")
      assert.strictEqual(reDigested.signature, "invalid")
      assert.isFalse(reDigested.verified)
      const badValue = yield* verifyAuditPack(root, "s", {
        ...read,
        signature: { algorithm: "ed25519", key_id: "x", value: "not base64 at all" }
      }, { publicKey: createPublicKey(mine.publicKey) })
      assert.strictEqual(badValue.signature, "invalid")
      const { pack: unsigned } = yield* createAuditPack(root, "s")
      const missing = yield* verifyAuditPack(root, "s", unsigned, { publicKey: createPublicKey(mine.publicKey) })
      assert.strictEqual(missing.signature, "absent")
      assert.isFalse(missing.verified)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a pack with another schema_version is InvalidPack naming the version", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root)
      yield* writeAuditPack(root, "s")
      const file = packFile(root)
      writePackJson(file, { ...readPackJson(file), schema_version: 2 })
      const error = yield* Effect.flip(readAuditPack(file))
      assert.instanceOf(error, InvalidPack)
      assert.include(error.message, "unsupported schema_version 2 (expected 1)")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a reference-format pack (no digest, no signature) verifies and reports itself unsigned", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root)
      const { pack } = yield* createAuditPack(root, "s")
      const file = packFile(root)
      const { pack_digest: _digest, ...reference } = pack
      fs.writeFileSync(file, JSON.stringify(reference, null, 2))
      const result = yield* verifyAuditPack(root, "s", yield* readAuditPack(file))
      assert.isTrue(result.verified)
      assert.strictEqual(result.digest, "absent")
      assert.strictEqual(result.signature, "absent")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a pack taken while the session is open (lock held) still verifies", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "live")
        yield* appendAll(log, turn("one"))
        yield* log.flush
        assert.isTrue(fs.existsSync(pathsOf(root, "live").lock))
        const { pack } = yield* writeAuditPack(root, "live")
        assert.include(pack.entries.map((e) => e.path), "session.lock")
        const result = yield* verifyAuditPack(root, "live", pack)
        assert.isTrue(result.verified)
      }))
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a crash while writing a pack leaves the old pack in place and no temporary file", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root).pipe(Effect.provide(nodeLayer()))
      yield* writeAuditPack(root, "s")
      const before = fs.readFileSync(packFile(root), "utf8")
      fs.writeFileSync(path.join(pathsOf(root, "s").derivedDir, "notes", "b.txt"), "new\n")
      const controller = yield* FaultController
      for (const op of ["write", "fsync", "rename"] as const) {
        yield* controller.reset
        yield* controller.arm({ _tag: "Fail", call: 0, code: "EIO", op })
        const exit = yield* Effect.exit(writeAuditPack(root, "s"))
        assert.isTrue(Exit.isFailure(exit), op)
        assert.strictEqual(fs.readFileSync(packFile(root), "utf8"), before, op)
        assert.deepStrictEqual(fs.readdirSync(pathsOf(root, "s").derivedDir).filter((n) => n.endsWith(".tmp")), [])
      }
      yield* controller.reset
      const { pack } = yield* writeAuditPack(root, "s")
      assert.include(pack.entries.map((e) => e.path), "derived/notes/b.txt")
    }).pipe(Effect.provide(Layer.provideMerge(Layer.fresh(SessionRegistry.layer), SessionFs.layerFaulty()))))

  it.effect("an I/O error while reading a listed file fails verify with that error, not as missing or mismatched", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root).pipe(Effect.provide(nodeLayer()))
      const { pack } = yield* createAuditPack(root, "s")
      const controller = yield* FaultController
      yield* controller.reset
      yield* controller.arm({ _tag: "Fail", call: 2, code: "EIO", op: "read" })
      const error = yield* Effect.flip(verifyAuditPack(root, "s", pack))
      assert.strictEqual(error._tag, "StoreIoError")
      assert.strictEqual(error._tag === "StoreIoError" ? error.code : "", "EIO")
    }).pipe(Effect.provide(Layer.provideMerge(Layer.fresh(SessionRegistry.layer), SessionFs.layerFaulty()))))

  it.effect("a FIFO in the session is skipped by create, and one planted in a file's place is a mismatch, never opened", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      yield* recordSession(root)
      const dir = pathsOf(root, "s").dir
      execFileSync("mkfifo", [path.join(dir, "derived", "pipe")])
      const { pack } = yield* createAuditPack(root, "s")
      assert.notInclude(pack.entries.map((e) => e.path), "derived/pipe")
      const note = path.join(dir, "derived", "notes", "a.txt")
      fs.rmSync(note)
      execFileSync("mkfifo", [note])
      const result = yield* verifyAuditPack(root, "s", pack)
      assert.deepStrictEqual(result.mismatchDetails.map((d) => [d.path, d.reason]), [[
        "derived/notes/a.txt",
        "not-a-file"
      ]])
      assert.deepStrictEqual(result.unaccounted, [])
    }).pipe(Effect.provide(nodeLayer())))
})
