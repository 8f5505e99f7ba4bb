/**
 * Finishing a source, as a property of the pure mappers on the real fixtures (read from
 * projections' `test/fixtures/realdata`): mapping a prefix, persisting the state through its
 * Schema, mapping the rest and finishing gives exactly the events of mapping everything at once
 * and finishing — whatever the cut; a finished session closes every turn it opened and writes
 * `thread.completed` once, with the sum of the turns' usage; finishing twice adds nothing; and a
 * finished source that grows reopens with `thread.started`.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ImportMapper, ThreadEvent } from "@logbook/domain"
import {
  claudeTranscriptMapper,
  codexExecMapper,
  codexRolloutMapper,
  geminiSessionMapper,
  recogniseImportFormat
} from "@logbook/domain"
import { Arbitrary, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

const realdata = path.join(import.meta.dirname, "..", "..", "..", "projections", "test", "fixtures", "realdata")

const recordsOf = (file: string): Array<unknown> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim().length > 0 && !l.startsWith("#")).map((l) =>
    JSON.parse(l)
  )

const mapperFor = (records: ReadonlyArray<unknown>): ImportMapper<unknown> => {
  const format = records.map(recogniseImportFormat).find((f) => f !== undefined)
  const mappers: Record<string, unknown> = {
    codex: codexRolloutMapper,
    claude: claudeTranscriptMapper,
    exec: codexExecMapper,
    gemini: geminiSessionMapper
  }
  return mappers[format ?? "exec"] as ImportMapper<unknown>
}

/** Steps `records` from `state`, returning the events and the new state. */
const mapAll = <S>(mapper: ImportMapper<S>, state: S, records: ReadonlyArray<unknown>) => {
  const events: Array<ThreadEvent> = []
  let s = state
  for (const record of records) {
    const step = mapper.step(s, record)
    s = step.state
    events.push(...step.events)
  }
  return { state: s, events }
}

const finish = <S>(mapper: ImportMapper<S>, state: S) => {
  const step = mapper.finish?.(state)
  return step === undefined ? { state, events: [] } : { state: step.state, events: [...step.events] }
}

const files = ["codex-rollout", "claude-code", "codex-exec-json"].flatMap((dir) =>
  fs.readdirSync(path.join(realdata, dir)).sort().map((name) => path.join(realdata, dir, name))
)

describe("finishing an imported source", () => {
  for (const file of files) {
    const records = recordsOf(file)
    const mapper = mapperFor(records)
    const identity = records.map((r) => mapper.identify(r)).find((i) => i !== undefined) ??
      { sessionId: "codex-x", threadId: "x" }
    const whole = mapAll(mapper, mapper.initial(identity), records)
    const finished = finish(mapper, whole.state)
    const expected = [...whole.events, ...finished.events]

    it(`${path.basename(file)}: every opened turn is closed and thread.completed carries their usage`, () => {
      const starts = expected.filter((e) => e.type === "turn.started").length
      const ends = expected.filter((e) => e.type === "turn.completed" || e.type === "turn.failed")
      assert.strictEqual(ends.length, starts)
      const completed = expected.filter((e) => e.type === "thread.completed")
      assert.strictEqual(completed.length, 1)
      const sum = ends.reduce((n, e) => n + (e.usage?.output_tokens ?? 0), 0)
      const total = completed[0]?.type === "thread.completed" ? completed[0].usage.output_tokens : -1
      assert.isAtLeast(total, sum)
      assert.deepStrictEqual(finish(mapper, finished.state).events, [], "finishing twice adds nothing")
    })

    it.prop(
      `${path.basename(file)}: prefix, persisted state, rest, finish = whole, finish`,
      {
        cut: Arbitrary.schema(
          Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(records.length))
        )
      },
      ({ cut }) => {
        const first = mapAll(mapper, mapper.initial(identity), records.slice(0, cut))
        const saved = Schema.decodeUnknownSync(mapper.state)(
          JSON.parse(JSON.stringify(Schema.encodeUnknownSync(mapper.state)(first.state)))
        )
        const rest = mapAll(mapper, saved, records.slice(cut))
        const done = finish(mapper, rest.state)
        assert.deepStrictEqual([...first.events, ...rest.events, ...done.events], expected)
      },
      { timeout: 60_000, arbitrary: { runs: 20 } }
    )
  }

  it("a finished source that grows reopens with thread.started, and completes again when finished", () => {
    const file = files.find((f) => f.includes("tiny")) ?? ""
    const records = recordsOf(file)
    const mapper = mapperFor(records)
    const identity = records.map((r) => mapper.identify(r)).find((i) => i !== undefined) ??
      { sessionId: "x", threadId: "x" }
    const once = finish(mapper, mapAll(mapper, mapper.initial(identity), records).state)
    const prompt = records.find((r) => (r as { type?: string }).type === "user")
    const grown = mapAll(mapper, once.state, [prompt])
    assert.strictEqual(grown.events[0]?.type, "thread.started")
    assert.strictEqual(grown.events[1]?.type, "turn.started")
    const again = finish(mapper, grown.state)
    assert.deepStrictEqual(again.events.map((e) => e.type), ["turn.completed", "thread.completed"])
  })
})
