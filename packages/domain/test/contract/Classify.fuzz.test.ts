/**
 * Fuzz suite of the scan classifier, the decoders and the lifecycle reducer (issue 7): at
 * least 100 000 seeded lines per default run — canonical lines and their mutations (see
 * `@logbook/testkit` FuzzLines) — go through `classifyLine`, `decodeLineText`, `decodeEnvelope`,
 * `decodeEvent` and, as one long log, through `applyLifecycleEvent`. Nothing may throw, every
 * failure must be a `SchemaError`, and no line that does not decode as a lifecycle event may
 * open, close or count a turn (docs/log.md#classification, docs/log.md#lifecycle).
 *
 * Scale with `LOGBOOK_FUZZ_LINES=1000000`, vary with `LOGBOOK_FUZZ_SEED=<n>`; a failure prints
 * the seed, the line index and kind so it replays exactly.
 */
import { assert, describe, it } from "@effect/vitest"
import type { FuzzKind, FuzzLine } from "@logbook/testkit"
import {
  envInt,
  FUZZ_KINDS,
  lossyText,
  makeFuzzer,
  makePool,
  parseOrUndefined,
  rustTrim,
  strictText
} from "@logbook/testkit"
import { Result, Schema } from "effect"
import type { LineClass } from "../../src/contract/Classify.ts"
import { classifyLine } from "../../src/contract/Classify.ts"
import { lifecycleKindOf } from "../../src/contract/LifecycleKind.ts"
import { decodeEnvelope, decodeEvent, decodeLineText } from "../../src/contract/ThreadEvent.ts"
import type { LogState } from "../../src/log/Lifecycle.ts"
import { applyLifecycleEvent, initialLogState } from "../../src/log/Lifecycle.ts"
import type { TurnEntry } from "../../src/log/SessionFiles.ts"

const SEED = envInt("LOGBOOK_FUZZ_SEED", 0x10_6b00)
const LINES = envInt("LOGBOOK_FUZZ_LINES", 100_000)

type Attempt<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly thrown: unknown }

/** Runs `f`, turning a throw into a value: a throw is exactly what this suite hunts for. */
const attempt = <A>(f: () => A): Attempt<A> => {
  try {
    return { ok: true, value: f() }
  } catch (thrown) {
    return { ok: false, thrown }
  }
}

const valueDecoders: ReadonlyArray<readonly [string, (input: unknown) => Result.Result<unknown, unknown>]> = [
  ["decodeEvent", decodeEvent],
  ["decodeEnvelope", decodeEnvelope]
]

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const preview = (line: FuzzLine): string => {
  const text = lossyText(line.bytes.subarray(0, 160))
  return JSON.stringify(line.bytes.length > 160 ? `${text}… (${line.bytes.length} bytes)` : text)
}

const summary = (cls: LineClass): string => cls._tag === "Skip" ? "Skip" : `Counted(${cls.type}, ${cls.lifecycle})`

/** Per-kind tallies, reported in the assertion message so a run documents its own coverage. */
interface Tally {
  lines: number
  counted: number
  decoded: number
}

interface Run {
  readonly violations: Array<string>
  readonly tally: Map<FuzzKind, Tally>
  readonly state: LogState
  readonly closed: ReadonlyArray<TurnEntry>
  readonly counted: number
  readonly decodedTurnStarts: number
  readonly opened: number
}

/**
 * Generates `total` lines and checks every per-line property, while folding the counted
 * lines through the lifecycle reducer exactly as a scan does and checking each transition.
 */
const fuzz = (seed: number, total: number, classify: (line: Uint8Array | string) => LineClass = classifyLine): Run => {
  const pool = makePool(seed, 1_500)
  const fuzzer = makeFuzzer({ seed, pool, total })
  const violations: Array<string> = []
  const tally = new Map<FuzzKind, Tally>(FUZZ_KINDS.map((k) => [k, { lines: 0, counted: 0, decoded: 0 }]))
  let state = initialLogState(1)
  const closed: Array<TurnEntry> = []
  let offset = 0
  let counted = 0
  let decodedTurnStarts = 0
  let opened = 0
  let lastOpened = 0

  for (let i = 0; i < total; i++) {
    const line = fuzzer.next()
    const fail = (what: string): void => {
      violations.push(`#${i} [${line.kind}] ${what}: ${preview(line)}`)
    }
    const t = tally.get(line.kind)
    if (t !== undefined) t.lines++

    // 1. The classifier never throws, on bytes nor on text, and both forms agree.
    const fromBytes = attempt(() => classify(line.bytes))
    if (!fromBytes.ok) {
      fail(`classifyLine(bytes) threw ${String(fromBytes.thrown)}`)
      continue
    }
    const cls = fromBytes.value
    const text = strictText(line.bytes)
    if (text === undefined) {
      if (cls._tag !== "Skip") fail(`invalid UTF-8 was ${summary(cls)}`)
    } else {
      const fromText = attempt(() => classify(text))
      if (!fromText.ok) fail(`classifyLine(text) threw ${String(fromText.thrown)}`)
      else if (summary(fromText.value) !== summary(cls)) {
        fail(`text gives ${summary(fromText.value)}, bytes give ${summary(cls)}`)
      }
    }

    // 2. The decoders never throw; every failure is a SchemaError. Reconstruction reads lines
    //    lossily, so undecodable bytes are decoded here the same way.
    const trimmed = rustTrim(text ?? lossyText(line.bytes))
    const decodedLine = attempt(() => decodeLineText(trimmed))
    let decoded: Result.Result<unknown, Schema.SchemaError> | undefined
    if (!decodedLine.ok) fail(`decodeLineText threw ${String(decodedLine.thrown)}`)
    else {
      decoded = decodedLine.value
      if (Result.isFailure(decoded) && !Schema.isSchemaError(decoded.failure)) {
        fail(`decodeLineText failed with a non-SchemaError ${String(decoded.failure)}`)
      }
    }
    // decodeLineText already ran decodeEnvelope on the parsed line; feed both value decoders
    // the bare event and the envelope, each the right shape for one and the wrong for the other.
    const parsed = parseOrUndefined(trimmed)
    if (parsed !== undefined) {
      const bare = isRecord(parsed) && "event" in parsed ? parsed.event : parsed
      for (const [name, decode] of valueDecoders) {
        for (const input of [bare, parsed]) {
          const out = attempt(() => decode(input))
          if (!out.ok) fail(`${name} threw ${String(out.thrown)}`)
          else if (Result.isFailure(out.value) && !Schema.isSchemaError(out.value.failure)) {
            fail(`${name} failed with a non-SchemaError ${String(out.value.failure)}`)
          }
        }
      }
    }

    // 3. Classification agrees with full decoding: a decodable line is counted with its type;
    //    a counted lifecycle line decodes (no phantom lifecycle); a counted line has a valid
    //    envelope head.
    const lineDecodes = text !== undefined && decoded !== undefined && Result.isSuccess(decoded)
    const decodedType = lineDecodes && isRecord(parsed) && isRecord(parsed.event) ? parsed.event.type : undefined
    if (lineDecodes && cls._tag === "Skip") fail("a fully decodable line was skipped")
    if (cls._tag === "Counted") {
      counted++
      if (t !== undefined) t.counted++
      const event = isRecord(parsed) ? parsed.event : undefined
      if (!isRecord(parsed) || typeof parsed.schema_version !== "string" || !isRecord(event)) {
        fail(`${summary(cls)} without a valid envelope`)
      } else if (event.type !== cls.type) fail(`${summary(cls)} but event.type is ${String(event.type)}`)
      if (cls.lifecycle !== lifecycleKindOf(cls.type)) fail(`${summary(cls)} has the wrong lifecycle kind`)
      if (cls.lifecycle !== "other") {
        if (!lineDecodes) fail(`phantom lifecycle: ${summary(cls)} does not decode`)
        if (cls.envelope === undefined) fail(`${summary(cls)} carries no decoded envelope`)
        if (cls.lifecycle === "turn_completed" && !(isRecord(event) && isRecord(event.usage))) {
          fail("turn.completed counted without a usage object")
        }
      } else if (cls.envelope !== undefined) fail(`${summary(cls)} carries an envelope`)
    }
    if (lineDecodes) {
      if (t !== undefined) t.decoded++
      if (decodedType === "turn.started") decodedTurnStarts++
    }

    // 4. What the spec fixes for this kind of line.
    const expect = line.expect
    if (expect !== undefined) {
      if (expect._tag === "skip" && cls._tag !== "Skip") fail(`must be skipped, was ${summary(cls)}`)
      if (
        expect._tag === "countedUndecodable" && (cls._tag !== "Counted" || cls.lifecycle !== "other" || lineDecodes)
      ) {
        fail(`must be counted as other and not decode, was ${summary(cls)} (decodes: ${lineDecodes})`)
      }
      if (expect._tag === "sameAs") {
        const base = classifyLine(expect.base)
        if (summary(base) !== summary(cls)) fail(`classified ${summary(cls)}, its base ${summary(base)}`)
      }
    }

    // 5. The scan fold: contiguous turn numbers, and every opening or closing line decodes as
    //    the lifecycle event it claims to be.
    const span = { start: offset, end: offset + line.bytes.length + 1 }
    offset = span.end
    if (cls._tag === "Skip") continue
    const before = state
    const step = attempt(() => applyLifecycleEvent(state, cls.lifecycle, span, ""))
    if (!step.ok) {
      fail(`applyLifecycleEvent threw ${String(step.thrown)}`)
      continue
    }
    const next = step.value.state
    if (next.eventCount !== before.eventCount + 1) fail("eventCount did not advance by one")
    if (cls.lifecycle === "turn_started") {
      opened++
      const number = next.open?.turn_number
      if (number !== lastOpened + 1) fail(`opened turn ${String(number)} after turn ${lastOpened}`)
      lastOpened = number ?? lastOpened
      if (decodedType !== "turn.started") fail(`phantom turn: opened by a line decoding as ${String(decodedType)}`)
    } else if (
      next.open !== undefined && before.open !== undefined && next.open.turn_number !== before.open.turn_number
    ) {
      fail("a non-turn.started line changed the open turn")
    } else if (next.open !== undefined && before.open === undefined) fail("a non-turn.started line opened a turn")
    if (step.value.closed !== undefined) {
      const expected = closed.length + 1
      if (step.value.closed.turn_number !== expected) {
        fail(`closed turn ${step.value.closed.turn_number}, expected ${expected}`)
      }
      closed.push(step.value.closed)
      const closer = cls.lifecycle === "turn_started" || decodedType === "turn.completed" ||
        decodedType === "turn.failed"
      if (!closer) fail(`a line decoding as ${String(decodedType)} closed a turn`)
    }
    if (
      next.status !== before.status &&
      !(decodedType === "thread.completed" || decodedType === "thread.started" || decodedType === "turn.started")
    ) {
      fail(`status flipped to ${next.status} by a line decoding as ${String(decodedType)}`)
    }
    state = next
  }
  return { violations, tally, state, closed, counted, decodedTurnStarts, opened }
}

const report = (run: Run): string =>
  [...run.tally].map(([kind, t]) => `${kind}: ${t.lines} lines, ${t.counted} counted, ${t.decoded} decode`).join("; ")

describe("classifyLine fuzz", () => {
  it(`${LINES} fuzzed lines never throw, never fake a lifecycle event and fold into contiguous turns`, () => {
    const run = fuzz(SEED, LINES)
    const shown = run.violations.slice(0, 15).join("\n")
    assert.strictEqual(
      run.violations.length,
      0,
      `seed ${SEED}: ${run.violations.length} violations\n${shown}\n(${report(run)})`
    )
    // Every kind was exercised, and the mix produced real turns, not a log of skips.
    for (const [kind, t] of run.tally) assert.isAbove(t.lines, 0, `kind ${kind} was generated`)
    assert.isAtLeast(run.opened, LINES / 50, "turns were opened")
    // No phantom turns: every opened turn is a line that decodes as turn.started, and back.
    assert.strictEqual(run.opened, run.decodedTurnStarts, "turns opened = lines decoding as turn.started")
    assert.strictEqual(run.state.eventCount, run.counted, "eventCount = counted lines")
    assert.strictEqual(run.state.turnCount, run.closed.length, "turnCount = last closed turn")
    assert.strictEqual(run.opened, run.closed.length + (run.state.inTurn ? 1 : 0), "each opened turn closes once")
  })

  it("the properties catch a classifier that trusts the envelope head of lifecycle lines", () => {
    // The bug docs/log.md#classification guards against: counting a lifecycle line on `type` alone.
    const lenient = (line: Uint8Array | string): LineClass => {
      const text = typeof line === "string" ? line : strictText(line)
      const value = text === undefined ? undefined : parseOrUndefined(rustTrim(text))
      const event = isRecord(value) ? value.event : undefined
      if (!isRecord(value) || typeof value.schema_version !== "string" || !isRecord(event)) return { _tag: "Skip" }
      return typeof event.type === "string"
        ? { _tag: "Counted", type: event.type, lifecycle: lifecycleKindOf(event.type) }
        : { _tag: "Skip" }
    }
    const run = fuzz(SEED, 3_000, lenient)
    assert.isTrue(run.violations.some((v) => v.includes("phantom")), run.violations.slice(0, 3).join("\n"))
    assert.notStrictEqual(run.opened, run.decodedTurnStarts)
  })

  it("the value decoders return a SchemaError instead of throwing when reading the input throws", () => {
    // Host values reach decodeEvent through appendUnknown; Schema's Result adapter rethrows a
    // defect raised while the input is read (a throwing getter or proxy trap).
    const hostile: ReadonlyArray<readonly [string, unknown]> = [
      ["throwing getter", {
        type: "error",
        get message(): string {
          throw new Error("getter boom")
        }
      }],
      [
        "throwing proxy trap",
        new Proxy({ type: "custom.x" }, {
          ownKeys: () => {
            throw new Error("ownKeys boom")
          }
        })
      ],
      ["throwing nested getter", {
        schema_version: "0.18.0",
        event: {
          get type(): string {
            throw new Error("type boom")
          }
        }
      }]
    ]
    for (const [name, value] of hostile) {
      for (const [decoder, decode] of valueDecoders) {
        const out = attempt(() => decode(value))
        assert.isTrue(out.ok, `${decoder} threw on a ${name}: ${out.ok ? "" : String(out.thrown)}`)
        if (out.ok) {
          assert.isTrue(Result.isFailure(out.value), `${decoder} rejects a ${name}`)
          const failure = Result.isFailure(out.value) ? out.value.failure : undefined
          assert.isTrue(Schema.isSchemaError(failure), `${decoder} fails with a SchemaError`)
          if (Schema.isSchemaError(failure)) assert.isAbove(failure.message.length, 0)
        }
      }
    }
  })

  it("a decode that trips over a throwing getter names the thrown error", () => {
    const value = {
      type: "error",
      get message(): string {
        throw new Error("getter boom")
      }
    }
    const out = decodeEvent(value)
    assert.isTrue(Result.isFailure(out) && out.failure.message.includes("getter boom"), String(out))
  })

  it("the run is deterministic: the same seed yields the same lines", () => {
    const draw = (seed: number) => {
      const fuzzer = makeFuzzer({ seed, pool: makePool(seed, 50), total: 500, huge: 0, deep: 2, depth: 50 })
      return Array.from({ length: 500 }, () => fuzzer.next())
    }
    const a = draw(7)
    const b = draw(7)
    const c = draw(8)
    assert.deepStrictEqual(a, b)
    assert.notDeepEqual(a, c)
  })
})
