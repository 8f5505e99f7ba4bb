import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import {
  decodeManifestText,
  decodePendingCapRewriteText,
  decodeTurnIndexText,
  encodeManifest,
  encodePendingCapRewrite,
  encodeTurnIndex,
  encodeTurnIndexChunks,
  evictedTurnCount,
  initialManifest,
  Manifest,
  PendingCapRewrite,
  SESSION_STORE_SCHEMA_VERSION,
  TurnEntry,
  TurnIndexFile
} from "../../src/log/SessionFiles.ts"

const manifestText =
  "{\"session_id\":\"a/b\",\"schema_version\":1,\"created_at\":\"2026-10-03T09:12:44.123456789+00:00\"," +
  "\"updated_at\":\"2026-10-03T09:13:01.5+00:00\",\"turn_count\":6,\"event_count\":40,\"status\":\"active\"," +
  "\"in_turn\":true,\"persisted_file_len\":9134,\"retained_turn_base\":3}"
const turnIndexText =
  "{\"entries\":[{\"turn_number\":3,\"start_offset\":0,\"end_offset\":412,\"event_count\":4,\"ts\":\"2026-10-03T09:12:44.1+00:00\"}]}"
const markerText = "{\"previous_file_len\":9134,\"new_file_len\":2210,\"retained_turn_base\":7}"

const succeed = <A, E>(result: Result.Result<A, E>): A => {
  if (Result.isFailure(result)) assert.fail(`expected success, got ${String(result.failure)}`)
  return result.success
}

describe("SessionFiles", () => {
  describe("manifest.json", () => {
    it("decodes a full manifest and re-encodes it to the same bytes", () => {
      const m = succeed(decodeManifestText(manifestText))
      assert.deepStrictEqual(m, {
        session_id: "a/b",
        schema_version: 1,
        created_at: "2026-10-03T09:12:44.123456789+00:00",
        updated_at: "2026-10-03T09:13:01.5+00:00",
        turn_count: 6,
        event_count: 40,
        status: "active",
        in_turn: true,
        persisted_file_len: 9134,
        retained_turn_base: 3
      })
      assert.strictEqual(encodeManifest(m), manifestText)
    })

    it("reads a reference V1 manifest without the optional keys and does not invent them", () => {
      const text =
        "{\"session_id\":\"s\",\"schema_version\":1,\"created_at\":\"x\",\"updated_at\":\"y\",\"turn_count\":0,\"event_count\":0,\"status\":\"completed\"}"
      const m = succeed(decodeManifestText(text))
      assert.isFalse("in_turn" in m)
      assert.isFalse("persisted_file_len" in m)
      assert.isFalse("retained_turn_base" in m)
      assert.strictEqual(encodeManifest(m), text)
    })

    it("ignores unknown keys on read and drops them on write", () => {
      const text = manifestText.replace("{", "{\"extra\":{\"nested\":[1,2]},\"zzz\":null,")
      const m = succeed(decodeManifestText(text))
      assert.isFalse("extra" in m)
      assert.strictEqual(encodeManifest(m), manifestText)
    })

    it("fails when any required field is missing", () => {
      const full = JSON.parse(manifestText) as Record<string, unknown>
      for (
        const key of ["session_id", "schema_version", "created_at", "updated_at", "turn_count", "event_count", "status"]
      ) {
        const { [key]: _dropped, ...rest } = full
        assert.isTrue(Result.isFailure(decodeManifestText(JSON.stringify(rest))), key)
      }
    })

    it("fails on a wrongly typed field, an unknown status or a negative counter", () => {
      for (
        const patch of [
          { status: "paused" },
          { turn_count: -1 },
          { event_count: 1.5 },
          { in_turn: "yes" },
          { persisted_file_len: null },
          { session_id: 7 }
        ]
      ) {
        const text = JSON.stringify({ ...JSON.parse(manifestText), ...patch })
        assert.isTrue(Result.isFailure(decodeManifestText(text)), JSON.stringify(patch))
      }
    })

    it("writes a new session's manifest with the spec defaults", () => {
      const m = initialManifest("sess-1", "2026-01-01T00:00:00+00:00")
      assert.strictEqual(m.schema_version, SESSION_STORE_SCHEMA_VERSION)
      assert.strictEqual(
        encodeManifest(m),
        "{\"session_id\":\"sess-1\",\"schema_version\":1,\"created_at\":\"2026-01-01T00:00:00+00:00\"," +
          "\"updated_at\":\"2026-01-01T00:00:00+00:00\",\"turn_count\":0,\"event_count\":0,\"status\":\"active\"," +
          "\"in_turn\":false,\"persisted_file_len\":0,\"retained_turn_base\":1}"
      )
    })

    it("never writes keys a wider value carries", () => {
      const wider = { ...initialManifest("s", "t"), secret: "leak" }
      assert.notInclude(encodeManifest(wider), "secret")
    })

    it.prop("encode, decode, encode is byte-stable for any manifest", [Manifest], ([m]) => {
      const text = encodeManifest(m)
      assert.strictEqual(encodeManifest(succeed(decodeManifestText(text))), text)
    })

    it("derives the evicted turn count from retained_turn_base", () => {
      const base = initialManifest("s", "t")
      const { retained_turn_base: _r, ...withoutBase } = base
      assert.strictEqual(evictedTurnCount(withoutBase), 0)
      assert.strictEqual(evictedTurnCount({ ...base, retained_turn_base: 0 }), 0)
      assert.strictEqual(evictedTurnCount({ ...base, retained_turn_base: 1 }), 0)
      assert.strictEqual(evictedTurnCount({ ...base, retained_turn_base: 7 }), 6)
    })
  })

  describe("index/turns.json", () => {
    it("decodes the spec example and re-encodes it to the same bytes", () => {
      const entries = succeed(decodeTurnIndexText(turnIndexText))
      assert.deepStrictEqual(entries, [{
        turn_number: 3,
        start_offset: 0,
        end_offset: 412,
        event_count: 4,
        ts: "2026-10-03T09:12:44.1+00:00"
      }])
      assert.strictEqual(encodeTurnIndex(entries), turnIndexText)
    })

    it("encodes an empty index as an empty entries array", () => {
      assert.strictEqual(encodeTurnIndex([]), "{\"entries\":[]}")
      assert.deepStrictEqual(succeed(decodeTurnIndexText("{\"entries\":[]}")), [])
    })

    it("ignores unknown keys at both levels", () => {
      const text = "{\"v\":2,\"entries\":[{\"turn_number\":1,\"start_offset\":0,\"end_offset\":5,\"event_count\":1," +
        "\"ts\":\"t\",\"kind\":\"x\"}]}"
      assert.strictEqual(
        encodeTurnIndex(succeed(decodeTurnIndexText(text))),
        "{\"entries\":[{\"turn_number\":1,\"start_offset\":0,\"end_offset\":5,\"event_count\":1,\"ts\":\"t\"}]}"
      )
    })

    it("fails when an entry lacks a required field or entries is missing", () => {
      for (const key of ["turn_number", "start_offset", "end_offset", "event_count", "ts"]) {
        const entry: Record<string, unknown> = {
          turn_number: 1,
          start_offset: 0,
          end_offset: 5,
          event_count: 1,
          ts: "t"
        }
        delete entry[key]
        assert.isTrue(Result.isFailure(decodeTurnIndexText(JSON.stringify({ entries: [entry] }))), key)
      }
      assert.isTrue(Result.isFailure(decodeTurnIndexText("{}")))
      assert.isTrue(Result.isFailure(decodeTurnIndexText("{\"entries\":{}}")))
    })

    it.prop(
      "encode, decode, encode is byte-stable for any index",
      [Schema.Array(TurnEntry)],
      ([entries]) => {
        const text = encodeTurnIndex(entries)
        assert.strictEqual(encodeTurnIndex(succeed(decodeTurnIndexText(text))), text)
      }
    )
  })

  describe("index/pending-cap-rewrite.json", () => {
    it("decodes the spec example and re-encodes it to the same bytes", () => {
      const marker = succeed(decodePendingCapRewriteText(markerText))
      assert.deepStrictEqual(marker, { previous_file_len: 9134, new_file_len: 2210, retained_turn_base: 7 })
      assert.strictEqual(encodePendingCapRewrite(marker), markerText)
    })

    it("writes checkpoint_bytes last and only when present", () => {
      const marker = { previous_file_len: 10, new_file_len: 4, retained_turn_base: 2, checkpoint_bytes: 3 }
      const text = encodePendingCapRewrite(marker)
      assert.strictEqual(
        text,
        "{\"previous_file_len\":10,\"new_file_len\":4,\"retained_turn_base\":2,\"checkpoint_bytes\":3}"
      )
      assert.deepStrictEqual(succeed(decodePendingCapRewriteText(text)), marker)
    })

    it("fails when any of the three required fields is missing", () => {
      for (const key of ["previous_file_len", "new_file_len", "retained_turn_base"]) {
        const { [key]: _dropped, ...rest } = JSON.parse(markerText) as Record<string, unknown>
        assert.isTrue(Result.isFailure(decodePendingCapRewriteText(JSON.stringify(rest))), key)
      }
    })

    it.prop("encode, decode, encode is byte-stable for any marker", [PendingCapRewrite], ([marker]) => {
      const text = encodePendingCapRewrite(marker)
      assert.strictEqual(encodePendingCapRewrite(succeed(decodePendingCapRewriteText(text))), text)
    })
  })

  describe("junk", () => {
    const junk = [
      "",
      " ",
      "{",
      "}",
      "null",
      "[]",
      "0",
      "\"x\"",
      "{\"entries\":null}",
      "\u0000\u0001",
      "{\"a\":1",
      "NaN"
    ]

    it("fails every decoder on junk without throwing", () => {
      for (const text of junk) {
        assert.isTrue(Result.isFailure(decodeManifestText(text)), text)
        assert.isTrue(Result.isFailure(decodeTurnIndexText(text)), text)
        assert.isTrue(Result.isFailure(decodePendingCapRewriteText(text)), text)
      }
    })

    it.prop("never throws on arbitrary text", [Schema.String], ([text]) => {
      decodeManifestText(text)
      decodeTurnIndexText(text)
      decodePendingCapRewriteText(text)
    })

    it.prop("never throws on truncations of valid files", [Schema.Int], ([n]) => {
      for (const text of [manifestText, turnIndexText, markerText]) {
        const cut = text.slice(0, Math.abs(n) % text.length)
        assert.isTrue(Result.isFailure(decodeManifestText(cut)))
        assert.isTrue(Result.isFailure(decodeTurnIndexText(cut)))
        assert.isTrue(Result.isFailure(decodePendingCapRewriteText(cut)))
      }
    })
  })
})

describe("the turn index fast decoder", () => {
  const schemaDecode = Schema.decodeUnknownResult(Schema.fromJsonString(TurnIndexFile))
  const mutations: ReadonlyArray<(e: Record<string, unknown>) => Record<string, unknown>> = [
    (e) => e,
    (e) => ({ ...e, turn_number: -1 }),
    (e) => ({ ...e, start_offset: 1.5 }),
    (e) => ({ ...e, end_offset: "12" }),
    (e) => ({ ...e, event_count: null }),
    (e) => ({ ...e, ts: 5 }),
    (e) => ({ ...e, extra: "ignored" }),
    (e) => {
      const { ts: _ts, ...rest } = e
      return rest
    }
  ]

  it.prop(
    "accepts exactly what the TurnIndexFile schema accepts, with the same entries",
    [Schema.Array(TurnEntry), Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 7 }))],
    ([entries, which]) => {
      const mutate = mutations[which] ?? ((e) => e)
      const text = JSON.stringify({ entries: entries.map((e) => mutate({ ...e })) })
      const fast = decodeTurnIndexText(text)
      const reference = schemaDecode(text)
      assert.strictEqual(Result.isSuccess(fast), Result.isSuccess(reference))
      if (Result.isSuccess(fast) && Result.isSuccess(reference)) {
        assert.deepStrictEqual(fast.success, reference.success.entries)
      }
    },
    { arbitrary: { runs: 300 } }
  )
})

describe("the chunked turn index encoder", () => {
  it.prop(
    "produces exactly the bytes of encodeTurnIndex for any chunk size",
    [Schema.Array(TurnEntry), Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 }))],
    ([entries, perChunk]) => {
      assert.strictEqual([...encodeTurnIndexChunks(entries, perChunk)].join(""), encodeTurnIndex(entries))
    },
    { arbitrary: { runs: 200 } }
  )
})
