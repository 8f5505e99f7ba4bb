/**
 * `logbook pack create|verify|keygen` in-process: a signed round trip, exit 5 with each problem
 * printed for a tampered, missing or wrongly signed session, exit 4 for an invalid pack, `--out`
 * and `--pack`, `--json`, and key files written privately and never replaced.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionMemory, storeLayerNode } from "../../../src/SessionMemory.ts"
import { logbook } from "../inProcess.ts"

/** A workspace with one recorded session `p` of two turns. */
const recorded = Effect.gen(function*() {
  const workspace = yield* tempDir("pack-cli")
  yield* Effect.gen(function*() {
    const memory = yield* SessionMemory
    for (const text of ["one", "two"]) {
      yield* memory.append({ type: "turn.started" })
      yield* memory.append({ type: "item.completed", item: { id: text, type: "agent_message", text } })
      yield* memory.append({
        type: "turn.completed",
        usage: { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }
      })
    }
  }).pipe(
    Effect.provide(SessionMemory.layer({ workspace, sessionId: "p", retention: false })),
    Effect.provide(storeLayerNode)
  )
  const session = path.join(workspace, ".logbook", "sessions", "p")
  return { workspace, session, at: (args: ReadonlyArray<string>) => logbook(["--workspace", workspace, ...args]) }
})

describe("logbook pack", () => {
  it.effect("keygen, a signed create and verify with the public key succeed; key files are 0600 and never replaced", () =>
    Effect.gen(function*() {
      const { at, session, workspace } = yield* recorded
      const keys = path.join(workspace, "keys")
      const keygen = yield* at(["pack", "keygen", keys, "--json"])
      assert.strictEqual(keygen.exitCode, 0, keygen.stderr)
      const written = JSON.parse(keygen.stdout)
      assert.strictEqual(fs.statSync(written.private_key).mode & 0o777, 0o600)
      assert.include(fs.readFileSync(written.public_key, "utf8"), "BEGIN PUBLIC KEY")
      const again = yield* at(["pack", "keygen", keys])
      assert.strictEqual(again.exitCode, 1)
      assert.include(again.stderr, "already exists")

      const create = yield* at(["pack", "create", "p", "--sign", written.private_key])
      assert.strictEqual(create.exitCode, 0, create.stderr)
      assert.include(create.stdout, `signed by key ${written.key_id}`)
      assert.isTrue(fs.existsSync(path.join(session, "derived", "audit-pack.json")))
      const verify = yield* at(["pack", "verify", "p", "--verify-key", written.public_key])
      assert.strictEqual(verify.exitCode, 0, verify.stderr)
      assert.include(verify.stdout, "Verified: every listed file matches; pack digest valid; signature valid")

      const other = JSON.parse((yield* at(["pack", "keygen", path.join(workspace, "other"), "--json"])).stdout)
      const wrong = yield* at(["pack", "verify", "p", "--verify-key", other.public_key, "--json"])
      assert.strictEqual(wrong.exitCode, 5)
      assert.strictEqual(JSON.parse(wrong.stdout).signature, "invalid")
      const swapped = yield* at(["pack", "verify", "p", "--verify-key", written.private_key])
      assert.strictEqual(swapped.exitCode, 1)
      assert.include(swapped.stderr, "private key")
    }))

  it.effect("verify exits 5 and prints each mismatched and missing file; added files are informational", () =>
    Effect.gen(function*() {
      const { at, session, workspace } = yield* recorded
      const out = path.join(workspace, "p.pack.json")
      assert.strictEqual((yield* at(["pack", "create", "p", "--out", out])).exitCode, 0)
      fs.writeFileSync(path.join(session, "derived", "extra.txt"), "x")
      const extra = yield* at(["pack", "verify", "p", "--pack", out])
      assert.strictEqual(extra.exitCode, 0, extra.stderr)
      assert.include(extra.stdout, "derived/extra.txt")
      fs.appendFileSync(path.join(session, "events.jsonl"), "\n")
      fs.rmSync(path.join(session, "index", "turns.json"))
      const bad = yield* at(["pack", "verify", "p", "--pack", out])
      assert.strictEqual(bad.exitCode, 5)
      assert.include(bad.stdout, "NOT verified")
      assert.include(bad.stdout, "mismatch  events.jsonl")
      assert.include(bad.stdout, "missing   index/turns.json")
      assert.include(bad.stderr, "2 problem(s)")
      const json = JSON.parse((yield* at(["pack", "verify", "p", "--pack", out, "--json"])).stdout)
      assert.deepStrictEqual(
        [json.verified, json.mismatches, json.missing, json.unaccounted],
        [false, ["events.jsonl"], ["index/turns.json"], ["derived/extra.txt"]]
      )
    }))

  it.effect("an invalid pack exits 4: an unsafe entry path or another schema version", () =>
    Effect.gen(function*() {
      const { at, session } = yield* recorded
      assert.strictEqual((yield* at(["pack", "create", "p"])).exitCode, 0)
      const file = path.join(session, "derived", "audit-pack.json")
      const pack = JSON.parse(fs.readFileSync(file, "utf8"))
      fs.writeFileSync(file, JSON.stringify({ ...pack, entries: [{ path: "../x", bytes: 0, sha256: "0".repeat(64) }] }))
      const traversal = yield* at(["pack", "verify", "p"])
      assert.strictEqual(traversal.exitCode, 4)
      assert.include(traversal.stderr, "unsafe entry path")
      fs.writeFileSync(file, JSON.stringify({ ...pack, schema_version: 3 }))
      const drift = yield* at(["pack", "verify", "p"])
      assert.strictEqual(drift.exitCode, 4)
      assert.include(drift.stderr, "unsupported schema_version 3")
      const edited = { ...pack, event_count: pack.event_count + 1 }
      fs.writeFileSync(file, JSON.stringify(edited))
      const digest = yield* at(["pack", "verify", "p"])
      assert.strictEqual(digest.exitCode, 5)
      assert.include(digest.stdout, "pack digest INVALID")
    }))

  it.effect("a pack relabelled as another session's (id, status, counters) does not verify without a key", () =>
    Effect.gen(function*() {
      const { at, session, workspace } = yield* recorded
      assert.strictEqual((yield* at(["pack", "create", "p"])).exitCode, 0)
      const pack = JSON.parse(fs.readFileSync(path.join(session, "derived", "audit-pack.json"), "utf8"))
      // A reference-format pack (no digest) claiming to be session q's, or another turn count.
      const { pack_digest: _, ...unsealed } = pack
      for (const [edit, field] of [[{ session_id: "q" }, "session_id"], [{ turn_count: 9 }, "turn_count"]] as const) {
        const file = path.join(workspace, `${field}.pack.json`)
        fs.writeFileSync(file, JSON.stringify({ ...unsealed, ...edit }))
        const r = yield* at(["pack", "verify", "p", "--pack", file])
        assert.strictEqual(r.exitCode, 5, r.stdout + r.stderr)
        assert.include(r.stdout, "NOT verified")
        assert.include(r.stdout, `mismatch  manifest.json: the pack's ${field} is`)
      }
      const honest = path.join(workspace, "honest.pack.json")
      fs.writeFileSync(honest, JSON.stringify(unsealed))
      assert.strictEqual((yield* at(["pack", "verify", "p", "--pack", honest])).exitCode, 0)
    }))

  it.effect(
    "a pack of 200 000 entries is reported in full, without overflowing the stack",
    () =>
      Effect.gen(function*() {
        const { at, session, workspace } = yield* recorded
        assert.strictEqual((yield* at(["pack", "create", "p"])).exitCode, 0)
        const pack = JSON.parse(fs.readFileSync(path.join(session, "derived", "audit-pack.json"), "utf8"))
        const { pack_digest: _, ...unsealed } = pack
        const gone = Array.from(
          { length: 200_000 },
          (_, i) => ({ path: `gone/f${i}`, bytes: 0, sha256: "0".repeat(64) })
        )
        const file = path.join(workspace, "big.pack.json")
        fs.writeFileSync(file, JSON.stringify({ ...unsealed, entries: [...unsealed.entries, ...gone] }))
        const r = yield* at(["pack", "verify", "p", "--pack", file])
        assert.strictEqual(r.exitCode, 5, r.stderr.slice(0, 2000))
        assert.strictEqual(r.stdout.split("\n").filter((l) => l.startsWith("  missing   gone/")).length, 200_000)
      }),
    { timeout: 200_000 }
  )

  it.effect("an unknown session exits 3", () =>
    Effect.gen(function*() {
      const { at } = yield* recorded
      const missing = yield* at(["pack", "create", "nope"])
      assert.strictEqual(missing.exitCode, 3)
    }))

  it.effect("every pack command has help with its flags and an example", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
        ["create", ["--out", "--sign", "EXAMPLES"]],
        ["verify", ["--pack", "--verify-key", "Exit 0 verified", "EXAMPLES"]],
        ["keygen", ["<dir>", "0600", "EXAMPLES"]]
      ]
      for (const [name, needles] of cases) {
        const help = yield* logbook(["pack", name, "--help"])
        assert.strictEqual(help.exitCode, 0, help.stderr)
        for (const needle of needles) assert.include(help.stdout, needle)
      }
    }))
})
