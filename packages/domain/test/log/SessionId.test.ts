import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { createHash } from "node:crypto"
import { sha256Hex } from "../../src/internal/sha256.ts"
import { sanitizeSessionId, sessionDirName } from "../../src/log/SessionId.ts"

const utf8 = (s: string) => new TextEncoder().encode(s)
const nodeSha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const SAFE_DIR = /^[A-Za-z0-9_.-]+$/

describe("SessionId", () => {
  describe("sanitizeSessionId", () => {
    it("reproduces the reference examples of docs/format.md#session-directory-name", () => {
      assert.strictEqual(sanitizeSessionId("sess-1"), "sess-1")
      assert.strictEqual(sanitizeSessionId("a/b"), "a_b")
      assert.strictEqual(sanitizeSessionId("../outside"), "_outside")
      assert.strictEqual(sanitizeSessionId(".."), "session")
      assert.strictEqual(sanitizeSessionId("ünï"), "_n_")
    })

    it("turns an empty id into the fallback name and strips every leading dot", () => {
      assert.strictEqual(sanitizeSessionId(""), "session")
      assert.strictEqual(sanitizeSessionId("...hidden.d"), "hidden.d")
      assert.strictEqual(sanitizeSessionId("a..b."), "a..b.")
    })

    it("replaces a character outside the BMP by a single underscore", () => {
      assert.strictEqual(sanitizeSessionId("a😀b"), "a_b")
      assert.strictEqual(sanitizeSessionId("日本"), "__")
    })

    it("collides for distinct ids, which is why directory names need more", () => {
      assert.strictEqual(sanitizeSessionId("a/b"), sanitizeSessionId("a_b"))
    })
  })

  describe("sessionDirName", () => {
    it("maps ids the sanitiser leaves unchanged to themselves, like the reference", () => {
      for (const id of ["sess-1", "a_b", "session", "A.b-C_9", "x."]) assert.strictEqual(sessionDirName(id), id)
    })

    it("gives colliding ids distinct directories", () => {
      assert.strictEqual(sessionDirName("a_b"), "a_b")
      assert.strictEqual(sessionDirName("a/b"), `a_b-${nodeSha256(utf8("a/b")).slice(0, 8)}`)
      assert.notStrictEqual(sessionDirName("a/b"), sessionDirName("a_b"))
      assert.notStrictEqual(sessionDirName("a/b"), sessionDirName("a\\b"))
    })

    it("hash-suffixes empty and dot-only ids", () => {
      assert.strictEqual(sessionDirName(""), `session-${nodeSha256(utf8("")).slice(0, 8)}`)
      assert.strictEqual(sessionDirName(".."), `session-${nodeSha256(utf8("..")).slice(0, 8)}`)
      assert.strictEqual(sessionDirName("."), `session-${nodeSha256(utf8(".")).slice(0, 8)}`)
      assert.strictEqual(sessionDirName("../outside"), `_outside-${nodeSha256(utf8("../outside")).slice(0, 8)}`)
    })

    it.prop("always yields one safe path component that does not start with a dot", [Schema.String], ([id]) => {
      const dir = sessionDirName(id)
      assert.match(dir, SAFE_DIR)
      assert.isFalse(dir.startsWith("."))
      assert.notStrictEqual(dir, "..")
    })

    it.prop("is the identity exactly on ids the sanitiser keeps", [Schema.String], ([id]) => {
      assert.strictEqual(sessionDirName(id) === id, sanitizeSessionId(id) === id)
    })
  })

  describe("sha256", () => {
    it("matches the FIPS 180-4 test vectors", () => {
      assert.strictEqual(sha256Hex(utf8("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
      assert.strictEqual(sha256Hex(utf8("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
      assert.strictEqual(
        sha256Hex(utf8("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
      )
    })

    it("agrees with node:crypto across every padding boundary", () => {
      for (let length = 0; length <= 200; length++) {
        const bytes = Uint8Array.from({ length }, (_, i) => (i * 37 + length) & 0xff)
        assert.strictEqual(sha256Hex(bytes), nodeSha256(bytes), `length ${length}`)
      }
    })

    it.prop("agrees with node:crypto on arbitrary text", [Schema.String], ([text]) => {
      assert.strictEqual(sha256Hex(utf8(text)), nodeSha256(utf8(text)))
    })
  })
})
