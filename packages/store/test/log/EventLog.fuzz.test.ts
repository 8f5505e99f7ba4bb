/**
 * Fuzz suite of the event log (issue 7): a session whose `events.jsonl` mixes real turns with
 * 20 000 fuzzed lines (`@logbook/testkit` FuzzLines) is opened by rescan, every retained turn
 * is reconstructed, and `appendUnknown` is fed fuzzed values. The expected state comes from the
 * domain classifier and lifecycle reducer run over the raw bytes (`fixtures/eventlogOracle.ts`);
 * reconstruction is checked against the scan's line rules (strict UTF-8, Rust `trim`, blank
 * lines ignored, every other line either decodes or counts as skipped), written here
 * independently of the store. The reference reads lines lossily there (docs/log.md#reconstruct); reading
 * them as the scan does keeps an event the scan skipped (invalid UTF-8) out of the turn.
 *
 * Scale with `LOGBOOK_FUZZ_STORE_LINES` and `LOGBOOK_FUZZ_APPENDS`, vary with `LOGBOOK_FUZZ_SEED`.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Manifest, ThreadEvent, TurnEntry } from "@logbook/domain"
import {
  classifyLine,
  decodeEvent,
  decodeLineText,
  encodeEvent,
  encodeLine,
  isIndexConsistent,
  isIndexValid
} from "@logbook/domain"
import type { FuzzLine, Prng } from "@logbook/testkit"
import {
  envInt,
  lossyText,
  makeFuzzer,
  makePool,
  mulberry32,
  parseOrUndefined,
  rustTrim,
  strictText,
  utf8Bytes
} from "@logbook/testkit"
import { Cause, Effect, Exit, Result } from "effect"
import * as fs from "node:fs"
import type { SessionLog } from "../../src/log/EventLog.ts"
import { InvalidEvent } from "../../src/log/EventLogError.ts"
import type { SessionPaths } from "../../src/log/SessionPaths.ts"
import { nodeLayer, openLog, pathsOf, testRoot } from "../fixtures/eventlogHelpers.ts"
import { assertDescribes, assertDiskConsistent, splitRaw } from "../fixtures/eventlogOracle.ts"

const SEED = envInt("LOGBOOK_FUZZ_SEED", 0x10_6b00)
const LINES = envInt("LOGBOOK_FUZZ_STORE_LINES", 20_000)
const APPENDS = envInt("LOGBOOK_FUZZ_APPENDS", 1_500)
const UNCAPPED = { maxEvents: 0, maxBytes: 0 } as const

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const usage = { input_tokens: 5, cached_input_tokens: 0, cache_creation_tokens: 1, output_tokens: 7 }

/**
 * Writes a log of `total` lines: real turns (canonical `turn.started`, a body of fuzzed or
 * valid lines, a canonical close — or none, leaving the turn to be closed by whatever comes
 * next) interleaved with runs of fuzzed lines. Two 1 MB lines and ten deeply nested ones.
 */
const buildLog = (seed: number, total: number): Buffer => {
  const rng = mulberry32(seed ^ 0x5eed)
  const pool = makePool(seed, 800)
  // Fuzzed lines are about three quarters of the log: spread the deep and huge ones over the first half.
  const fuzzer = makeFuzzer({ seed, pool, total: Math.floor(total / 2), huge: 2, deep: 10 })
  const parts: Array<Uint8Array> = []
  const newline = new Uint8Array([10])
  let written = 0
  const push = (bytes: Uint8Array) => {
    parts.push(bytes, newline)
    written++
  }
  const canonical = (event: ThreadEvent) => push(utf8Bytes(encodeLine(event)))
  let turnNo = 0
  while (written < total) {
    if (rng.chance(0.4)) {
      turnNo++
      canonical(
        rng.chance(0.5) ? { type: "turn.started" } : {
          type: "turn.started",
          context: {
            task_id: "task",
            turn_id: `turn-${turnNo}`,
            actor_id: "agent",
            origin: "user",
            timestamp: `2026-01-01T00:00:${String(turnNo % 60).padStart(2, "0")}Z`
          }
        }
      )
      for (let body = rng.int(0, 8); body > 0; body--) {
        if (rng.chance(0.3)) {
          canonical({ type: "item.completed", item: { id: `m${turnNo}`, type: "agent_message", text: "ok" } })
        } else push(fuzzer.next().bytes)
      }
      const close = rng.int(0, 9)
      if (close < 6) canonical({ type: "turn.completed", usage })
      else if (close < 8) canonical({ type: "turn.failed", message: `failure ${turnNo}` })
    } else {
      for (let run = rng.int(1, 6); run > 0; run--) push(fuzzer.next().bytes)
    }
  }
  return Buffer.concat(parts)
}

/** One turn's bytes under the scan's rules: strict UTF-8, Rust trim, blank lines ignored, undecodable ones counted. */
const expectedTurn = (bytes: Buffer, entry: TurnEntry): { events: Array<ThreadEvent>; skipped: number } => {
  const events: Array<ThreadEvent> = []
  let skipped = 0
  for (const line of splitRaw(bytes.subarray(entry.start_offset, entry.end_offset))) {
    const raw = strictText(line.bytes)
    const text = raw === undefined ? undefined : rustTrim(raw)
    if (text !== undefined && text.length === 0) continue
    const decoded = text === undefined ? undefined : decodeLineText(text)
    if (decoded !== undefined && Result.isSuccess(decoded)) events.push(decoded.success.event)
    else skipped++
  }
  return { events, skipped }
}

/**
 * Structural equality without recursion: decoded events can nest 10 000 levels deep, which
 * overflows the stack of chai's deep equality (and of JSON.stringify).
 */
const sameValue = (a: unknown, b: unknown): boolean => {
  const stack: Array<readonly [unknown, unknown]> = [[a, b]]
  while (stack.length > 0) {
    const [x, y] = stack.pop() ?? [undefined, undefined]
    if (Object.is(x, y)) continue
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false
    if (Array.isArray(x) !== Array.isArray(y)) return false
    const xr = x as Record<string, unknown>
    const yr = y as Record<string, unknown>
    const keys = Object.keys(xr)
    if (keys.length !== Object.keys(yr).length) return false
    for (const key of keys) {
      if (!Object.hasOwn(yr, key)) return false
      stack.push([xr[key], yr[key]])
    }
  }
  return true
}

/** The classifier's own count of the lines a scan counts, and the first line of each turn it opens. */
const classified = (bytes: Buffer) => {
  let counted = 0
  const turnStarts: Array<number> = []
  for (const line of splitRaw(bytes)) {
    const cls = classifyLine(line.bytes)
    if (cls._tag === "Skip") continue
    counted++
    if (cls.lifecycle === "turn_started") turnStarts.push(line.offset)
  }
  return { counted, turnStarts }
}

/** Checks the handle's state against the bytes on disk; returns the turn index. */
const checkAgainstBytes = (log: SessionLog, label: string) =>
  Effect.gen(function*() {
    const manifest: Manifest = yield* log.manifest
    const entries = yield* log.turnIndex
    const bytes = fs.readFileSync(log.paths.events)
    assertDescribes(bytes, manifest, entries, label)
    const { counted, turnStarts } = classified(bytes)
    assert.strictEqual(manifest.event_count, counted, `${label}: event_count = lines the classifier counts`)
    assert.deepStrictEqual(
      entries.map((e) => e.start_offset),
      turnStarts,
      `${label}: one turn per counted turn.started`
    )
    for (const entry of entries) {
      const first = splitRaw(bytes.subarray(entry.start_offset, entry.end_offset))[0]
      const text = first === undefined ? undefined : strictText(first.bytes)
      const decoded = text === undefined ? undefined : decodeLineText(rustTrim(text))
      assert.isTrue(
        decoded !== undefined && Result.isSuccess(decoded) && decoded.success.event.type === "turn.started",
        `${label}: turn ${entry.turn_number} starts with a line decoding as turn.started (no phantom turn)`
      )
    }
    assert.isTrue(isIndexValid(entries, bytes.length), `${label}: index valid for the file length`)
    assert.isTrue(isIndexConsistent(entries, manifest), `${label}: index consistent with the manifest`)
    return { manifest, entries, bytes }
  })

// --- appendUnknown inputs -------------------------------------------------------------------

const EXOTIC: ReadonlyArray<() => unknown> = [
  () => undefined,
  () => null,
  () => Number.NaN,
  () => 1n,
  () => Symbol("s"),
  () => () => 1,
  () => new Date(0),
  () => new Map([["type", "turn.started"]]),
  () => new Set(["turn.started"]),
  () => ({ type: "custom.x", value: Number.POSITIVE_INFINITY }),
  () => ({ type: "custom.x", value: 2n }),
  () => ({ type: "custom.x", value: undefined }),
  () => ({ type: "custom.x", value: () => 1 }),
  () => ({ type: "custom.x", when: new Date(0) }),
  () => ({ type: "custom.x", toJSON: () => ({ type: "turn.started" }) }),
  () => {
    const cyclic: Record<string, unknown> = { type: "custom.cycle" }
    cyclic.self = cyclic
    return cyclic
  },
  () => Object.assign(Object.create(null) as object, { type: "error", message: "null prototype" }),
  () => Object.freeze({ type: "turn.failed", message: "frozen" }),
  () => ({ type: "custom.sym", [Symbol("hidden")]: 1 }),
  () => ({ type: "custom.sparse", items: [1, , 3] }),
  () =>
    new (class Event {
      readonly type = "error"
      readonly message = "class instance"
    })(),
  () => ({ type: "custom.deep", x: JSON.parse(`${"[".repeat(10_000)}${"]".repeat(10_000)}`) }),
  () => ({
    type: "item.completed",
    item: { id: "d", type: "mcp_tool_call", tool_name: "t", arguments: deepObject(10_000) }
  }),
  () => ({ type: "unknown", original_type: "custom.x", fields: {} }),
  () => ({ type: "error", message: "\ud800 lone surrogate \u2028\u0000" }),
  () => ({ type: "turn.completed", usage: { input_tokens: -0 } }),
  () => ({ type: "turn.completed", usage: { input_tokens: 2 ** 53 } }),
  () => ({
    type: "error",
    get message(): string {
      throw new Error("getter boom")
    }
  }),
  () =>
    new Proxy({ type: "custom.proxy" }, {
      ownKeys: () => {
        throw new Error("ownKeys boom")
      }
    }),
  () => [{ type: "turn.started" }],
  () => "turn.started",
  () => ({ schema_version: "0.18.0", event: { type: "turn.started" } })
]

const deepObject = (depth: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = { a: value }
  return value
}

const WRONG: ReadonlyArray<unknown> = [[], null, "x", 42, -1, 1.5, true, {}, [1, 2], "", -0]

/** A JSON value with a random shape (sometimes posing as an event). */
const randomJson = (rng: Prng, depth: number): unknown => {
  const roll = rng.int(0, depth > 3 ? 4 : 7)
  switch (roll) {
    case 0:
      return rng.pick(WRONG)
    case 1:
      return rng.pick(["", "turn.started", "\u2028", "\ud800", "x".repeat(rng.int(0, 300))])
    case 2:
      return rng.int(-5, 5) * 10 ** rng.int(0, 20)
    case 3:
      return rng.chance(0.5)
    case 4:
      return null
    case 5:
      return Array.from({ length: rng.int(0, 4) }, () => randomJson(rng, depth + 1))
    default: {
      const out: Record<string, unknown> = {}
      for (let n = rng.int(0, 5); n > 0; n--) {
        out[rng.pick(["type", "message", "usage", "item", "thread_id", "id", "text", "a", "__proto__", "0"])] =
          randomJson(rng, depth + 1)
      }
      if (rng.chance(0.6)) {
        out.type = rng.pick(["turn.started", "turn.completed", "turn.failed", "thread.started", "error", "custom.y"])
      }
      return out
    }
  }
}

/** Replaces one field at a random path of a JSON value with a value of a wrong type. */
const withWrongField = (rng: Prng, value: unknown): unknown => {
  if (Array.isArray(value) && value.length > 0 && rng.chance(0.7)) {
    const i = rng.int(0, value.length - 1)
    return value.map((v, j) => j === i ? withWrongField(rng, v) : v)
  }
  if (isRecord(value)) {
    const keys = Object.keys(value)
    if (keys.length === 0) return value
    const key = rng.pick(keys)
    return { ...value, [key]: rng.chance(0.6) ? rng.pick(WRONG) : withWrongField(rng, value[key]) }
  }
  return rng.pick(WRONG)
}

/** One input for `appendUnknown`: parsed fuzz lines, valid events, wrong-typed events, random or exotic values. */
const appendInput = (rng: Prng, fuzzed: () => FuzzLine, valid: () => string): { source: string; value: unknown } => {
  const roll = rng.int(0, 9)
  if (roll <= 2) {
    const parsed = parseOrUndefined(rustTrim(lossyText(fuzzed().bytes)))
    const value = isRecord(parsed) && rng.chance(0.8) ? parsed.event : parsed
    return { source: "parsed fuzz line", value }
  }
  if (roll <= 4) return { source: "valid event", value: (JSON.parse(valid()) as { event: unknown }).event }
  if (roll <= 6) {
    return {
      source: "wrong-typed event",
      value: withWrongField(rng, (JSON.parse(valid()) as { event: unknown }).event)
    }
  }
  if (roll <= 8) return { source: "random value", value: randomJson(rng, 0) }
  return { source: "exotic value", value: rng.pick(EXOTIC)() }
}

const describeValue = (value: unknown): string => {
  const text = (() => {
    try {
      return JSON.stringify(value) ?? String(value)
    } catch {
      return Object.prototype.toString.call(value)
    }
  })()
  return text.length > 160 ? `${text.slice(0, 160)}…` : text
}

/** Appends fuzzed inputs, checking every outcome; returns the violations found. */
const fuzzAppends = (log: SessionLog, paths: SessionPaths, seed: number, count: number) =>
  Effect.gen(function*() {
    const rng = mulberry32(seed ^ 0xa99e)
    const pool = makePool(seed + 7, 300)
    const fuzzer = makeFuzzer({ seed: seed + 7, pool, total: count, huge: 0, deep: 3 })
    const violations: Array<string> = []
    const tally = { accepted: 0, rejected: 0 }
    yield* log.flush
    let expectedLen = fs.statSync(paths.events).size
    let checkedLen = expectedLen
    let pending: Array<string> = []
    const verifyFile = (label: string) =>
      Effect.gen(function*() {
        yield* log.flush
        const size = fs.statSync(paths.events).size
        if (size !== expectedLen) violations.push(`${label}: file is ${size} bytes, expected ${expectedLen}`)
        else {
          const tail = fs.readFileSync(paths.events).subarray(checkedLen).toString("utf8")
          if (tail !== pending.join("")) violations.push(`${label}: appended bytes differ from the accepted events`)
        }
        checkedLen = size
        expectedLen = size
        pending = []
      })
    for (let i = 0; i < count; i++) {
      const { source, value } = appendInput(rng, fuzzer.next, () => rng.pick(pool.all))
      const label = `#${i} ${source} ${describeValue(value)}`
      const before = (yield* log.manifest).event_count
      const exit = yield* Effect.exit(log.appendUnknown(value))
      const after = (yield* log.manifest).event_count
      if (Exit.isSuccess(exit)) {
        tally.accepted++
        const event = exit.value
        const line = encodeLine(event) + "\n"
        pending.push(line)
        expectedLen += Buffer.byteLength(line)
        if (after !== before + 1) violations.push(`${label}: accepted but event_count ${before} → ${after}`)
        const again = decodeEvent(JSON.parse(encodeEvent(event)))
        if (Result.isFailure(again)) violations.push(`${label}: accepted event does not decode again`)
        else if (encodeEvent(again.success) !== encodeEvent(event)) violations.push(`${label}: does not round-trip`)
        if (classifyLine(line)._tag === "Skip") {
          violations.push(`${label}: accepted event's line would be skipped by a scan`)
        }
      } else {
        tally.rejected++
        const error = Cause.findErrorOption(exit.cause)
        if (error._tag === "None") {
          violations.push(`${label}: rejected without a typed error: ${Cause.pretty(exit.cause)}`)
        } else if (!(error.value instanceof InvalidEvent)) {
          violations.push(`${label}: rejected with ${String(error.value)}`)
        } else if (
          error.value._tag !== "InvalidEvent" || error.value.detail.length === 0 || error.value.message.length === 0
        ) {
          violations.push(`${label}: InvalidEvent without a message`)
        }
        if (after !== before) violations.push(`${label}: rejected but event_count ${before} → ${after}`)
      }
      if (i % 100 === 99) yield* verifyFile(`after input ${i}`)
    }
    yield* verifyFile("at the end")
    return { violations, tally }
  })

describe("EventLog fuzz", () => {
  // Found by the fuzz run below: reconstruction trimmed lines with JavaScript's `trim`, which
  // strips U+FEFF and keeps U+0085, while the scan (and the reference's Rust `trim`) does the
  // opposite — so a NEL-edged event the scan counted was dropped, and a BOM-prefixed line the
  // scan skipped came back as an event.
  it.effect("reconstructTurn trims lines exactly as the scan does (U+0085 is whitespace, U+FEFF is not)", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot
      const paths = pathsOf(root, "trim")
      fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
      const msg = (text: string): ThreadEvent => ({
        type: "item.completed",
        item: { id: "m", type: "agent_message", text }
      })
      const lines = [
        encodeLine({ type: "turn.started" }),
        `\u0085${encodeLine(msg("NEL-edged"))}\u0085`,
        `\ufeff${encodeLine(msg("BOM-prefixed"))}`,
        "\u0085\u0085",
        encodeLine({ type: "turn.completed", usage })
      ]
      fs.writeFileSync(paths.events, lines.map((l) => `${l}\n`).join(""), { mode: 0o600 })
      const got = yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "trim", UNCAPPED)
        const manifest = yield* log.manifest
        // The scan counts the NEL-edged line and skips the BOM one (docs/log.md#rescan).
        assert.strictEqual(manifest.event_count, 3)
        return yield* log.reconstructTurn(1)
      }))
      assert.deepStrictEqual(
        got.events.map((e) => e.type === "item.completed" && e.item.type === "agent_message" ? e.item.text : e.type),
        [
          "turn.started",
          "NEL-edged",
          "turn.completed"
        ]
      )
      assert.strictEqual(got.skipped, 1, "the BOM-prefixed line does not decode; the NEL-only line is blank")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect(
    `a log of ${LINES} fuzzed and valid lines rescans, reconstructs and takes fuzzed appends consistently`,
    () =>
      Effect.gen(function*() {
        assert.isFalse(sameValue([{ a: [1, { b: 2 }] }], [{ a: [1, { b: 3 }] }]), "the comparison can fail")
        const { root } = yield* testRoot
        const id = "fuzz"
        const paths = pathsOf(root, id)
        fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 })
        const written = buildLog(SEED, LINES)
        fs.writeFileSync(paths.events, written, { mode: 0o600 })

        const appended = yield* Effect.scoped(Effect.gen(function*() {
          // Open: no metadata, so this is the authoritative rescan over every fuzzed line.
          const log = yield* openLog(root, id, UNCAPPED)
          const { bytes, entries } = yield* checkAgainstBytes(log, `rescan (seed ${SEED})`)
          assert.strictEqual(bytes.length, written.length, "opening did not change the file")
          assert.isAbove(entries.length, LINES / 50, "the log holds real turns")

          // Reconstruction of every retained turn: only lines the scan would accept come back.
          let skippedTotal = 0
          for (const entry of entries) {
            const got = yield* log.reconstructTurn(entry.turn_number)
            const want = expectedTurn(bytes, entry)
            assert.strictEqual(got.turn, entry.turn_number)
            assert.strictEqual(got.skipped, want.skipped, `turn ${entry.turn_number}: skipped lines`)
            assert.isTrue(sameValue(got.events, want.events), `turn ${entry.turn_number}: events`)
            skippedTotal += got.skipped
          }
          assert.isAbove(skippedTotal, 0, "some turns held undecodable lines")
          const last = entries.at(-1)?.turn_number ?? 0
          for (const missing of [0, -1, last + 1, 1.5]) {
            const error = yield* Effect.flip(log.reconstructTurn(missing))
            assert.strictEqual(error._tag, "TurnNotFound", `turn ${missing}`)
          }

          // appendUnknown with fuzzed input: typed rejections that append nothing, exact round trips.
          const { violations, tally } = yield* fuzzAppends(log, paths, SEED, APPENDS)
          assert.deepStrictEqual(violations.slice(0, 10), [], `seed ${SEED}: ${violations.length} violations`)
          assert.isAbove(tally.accepted, APPENDS / 10, "some inputs were accepted")
          assert.isAbove(tally.rejected, APPENDS / 10, "some inputs were rejected")
          yield* checkAgainstBytes(log, "after appends")
          return tally
        }))
        assert.isAbove(appended.accepted + appended.rejected, 0)

        // Closed: the published metadata describes the file; reopening takes it as is.
        const onDisk = assertDiskConsistent(paths, "after close")
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, id, UNCAPPED)
          const { manifest } = yield* checkAgainstBytes(log, "reopen")
          assert.strictEqual(manifest.event_count, onDisk.state.eventCount)
        }))
        // And a rescan from scratch agrees with it.
        fs.rmSync(paths.manifest)
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, id, UNCAPPED)
          const { manifest } = yield* checkAgainstBytes(log, "rescan after reopen")
          assert.strictEqual(manifest.turn_count, onDisk.state.turnCount)
          assert.strictEqual(manifest.event_count, onDisk.state.eventCount)
        }))
      }).pipe(Effect.provide(nodeLayer())),
    120_000
  )
})
