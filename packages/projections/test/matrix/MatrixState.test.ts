import { assert, describe, it } from "@effect/vitest"
import type { MatrixSnapshot, MatrixSpec, ThreadEvent } from "@logbook/domain"
import { encodeLine, Matrix } from "@logbook/domain"
import type { SnapshotLine } from "@logbook/store"
import { EventLog, SessionFs, SessionRegistry } from "@logbook/store"
import { buildTestSpec, tempDir } from "@logbook/testkit"
import { Effect, Layer, Result, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { matrixState, matrixStateOfEventsFile, matrixStateOfLines } from "../../src/matrix/MatrixState.ts"

const layer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

const tempRoot = () => tempDir("matrix-state")

const specOf = (id: string): MatrixSpec => buildTestSpec(id)

const ok = <A>(result: Result.Result<A, unknown>): A => {
  if (Result.isFailure(result)) assert.fail(String(result.failure))
  return result.success
}

const ids = (prefix: string): Matrix.IdGenerator => {
  let n = 0
  return { attemptId: () => `${prefix}-a${++n}`, workerId: () => `${prefix}-w${n}` }
}

/** The valid snapshots of one matrix's life: created, started, build reserved, launched, executed, test reserved. */
const history = (id: string): ReadonlyArray<MatrixSnapshot> => {
  const gen = ids(id)
  const out: Array<MatrixSnapshot> = []
  let s = ok(Matrix.create(specOf(id))).snapshot
  out.push(s)
  s = ok(Matrix.start(s)).snapshot
  out.push(s)
  const r = ok(Matrix.reserveReady(s, 3, gen))
  s = r.snapshot
  out.push(s)
  const assignment = r.assignments[0]
  if (assignment === undefined) return assert.fail("nothing reserved")
  s = ok(Matrix.markLaunchRequested(s, assignment.attempt_id)).snapshot
  out.push(s)
  s = ok(Matrix.report(s, {
    attemptId: assignment.attempt_id,
    workerId: assignment.worker_id,
    outcome: "success",
    evidence: [],
    cleanupConfirmed: true
  })).snapshot
  out.push(s)
  s = ok(Matrix.reserveReady(s, 3, gen)).snapshot
  out.push(s)
  return out
}

const updated = (snapshot: MatrixSnapshot): ThreadEvent => ({ type: "matrix.updated", ...snapshot })

const linesOf = (texts: ReadonlyArray<string>): Stream.Stream<SnapshotLine> => {
  let offset = 0
  return Stream.fromIterable(texts.map((text) => {
    const bytes = new TextEncoder().encode(text)
    const line = { offset, bytes }
    offset += bytes.length
    return line
  }))
}

const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }

const turn = (text: string, inside: ReadonlyArray<ThreadEvent> = []): ReadonlyArray<ThreadEvent> => [
  { type: "turn.started" },
  ...inside,
  { type: "item.completed", item: { id: `m-${text}`, type: "agent_message", text } },
  { type: "turn.completed", usage }
]

describe("MatrixState.matrixStateOfLines", () => {
  it.effect("keeps the latest snapshot per matrix id, ordered by id, ignoring other and unreadable lines", () =>
    Effect.gen(function*() {
      const b = history("b")
      const a = history("a")
      const texts = [
        encodeLine({ type: "thread.started", thread_id: "t" }) + "\n",
        ...b.slice(0, 3).map((s) => encodeLine(updated(s)) + "\n"),
        "\n",
        "not json at all \\u0041\n",
        ...a.map((s) => encodeLine(updated(s)) + "\n"),
        encodeLine(updated(b[3] ?? assert.fail())) + "\n",
        // A torn tail: never acknowledged, skipped like the scan skips it.
        encodeLine(updated(b[5] ?? assert.fail())).slice(0, 120)
      ]
      const state = yield* matrixStateOfLines(linesOf(texts))
      assert.deepStrictEqual([...state.keys()], ["a", "b"])
      assert.deepStrictEqual(state.get("a"), a[5])
      assert.deepStrictEqual(state.get("b"), b[3])
      assert.deepStrictEqual([...state], [...ok(Matrix.replay([...b.slice(0, 4), ...a]))])
    }))

  it.effect("reads a checkpoint whose type is written with unicode escapes", () =>
    Effect.gen(function*() {
      const [first] = history("m")
      const text = encodeLine(updated(first ?? assert.fail())).replace(`"matrix.updated"`, `"matrix\\u002eupdated"`)
      const state = yield* matrixStateOfLines(linesOf([text + "\n"]))
      assert.deepStrictEqual(state.get("m"), first)
    }))

  it.effect("returns an empty map for a log without checkpoints", () =>
    Effect.gen(function*() {
      const state = yield* matrixStateOfLines(linesOf(turn("x").map((e) => encodeLine(e) + "\n")))
      assert.strictEqual(state.size, 0)
    }))

  it.effect("fails closed on a well-formed checkpoint envelope that does not decode, naming its offset", () =>
    Effect.gen(function*() {
      const [first] = history("m")
      const good = encodeLine(updated(first ?? assert.fail())) + "\n"
      const bad = `{"schema_version":"0.18.0","event":{"type":"matrix.updated","spec":null}}\n`
      const error = yield* Effect.flip(matrixStateOfLines(linesOf([good, bad])))
      assert.strictEqual(error._tag, "MatrixError")
      assert.match(error.message, new RegExp(`^matrix checkpoint at byte ${good.length} does not decode: `))
    }))

  it.effect("fails closed when a revision does not advance, the spec changes, or an invariant breaks", () =>
    Effect.gen(function*() {
      const h = history("m")
      const line = (s: MatrixSnapshot) => encodeLine(updated(s)) + "\n"
      const s0 = h[0] ?? assert.fail()
      const s1 = h[1] ?? assert.fail()
      const stale = yield* Effect.flip(matrixStateOfLines(linesOf([line(s1), line(s0)])))
      assert.strictEqual(stale.message, `matrix checkpoint at byte ${line(s1).length}: matrix revision did not advance`)
      const changed = { ...s1, spec: { ...s1.spec, tasks: s1.spec.tasks.slice(0, 1) }, tasks: s1.tasks.slice(0, 1) }
      const respec = yield* Effect.flip(matrixStateOfLines(linesOf([line(s0), line(changed)])))
      assert.include(respec.message, "matrix specification changed after creation")
      const forged = { ...s1, lifecycle: "succeeded" as const }
      const invalid = yield* Effect.flip(matrixStateOfLines(linesOf([line(s0), line(forged)])))
      assert.include(invalid.message, "a succeeded matrix needs every task verified")
    }))
})

describe("MatrixState.matrixStateOfEventsFile", () => {
  it.effect("replays a file read-only, skipping torn tails and undecodable lines of other types", () =>
    Effect.gen(function*() {
      const dir = yield* tempRoot()
      const file = path.join(dir, "events.jsonl")
      const h = history("m")
      const texts = [
        ...h.slice(0, 4).map((s) => encodeLine(updated(s)) + "\n"),
        `{"schema_version":"0.18.0","event":{"type":"item.completed","item":{"id":"x","type":"hologram"}}}\n`,
        encodeLine(updated(h[4] ?? assert.fail())).slice(0, 200)
      ]
      fs.writeFileSync(file, texts.join(""))
      const before = fs.statSync(file)
      const state = yield* matrixStateOfEventsFile(file)
      assert.deepStrictEqual(state.get("m"), h[3])
      assert.deepStrictEqual([...state], [...(yield* matrixStateOfLines(linesOf(texts)))])
      const after = fs.statSync(file)
      assert.strictEqual(after.size, before.size)
      assert.strictEqual(after.mtimeMs, before.mtimeMs)
      assert.strictEqual((yield* matrixStateOfEventsFile(path.join(dir, "missing.jsonl"))).size, 0)
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("fails closed on an undecodable checkpoint, naming its offset", () =>
    Effect.gen(function*() {
      const dir = yield* tempRoot()
      const file = path.join(dir, "events.jsonl")
      const [first] = history("m")
      const good = encodeLine(updated(first ?? assert.fail())) + "\n"
      fs.writeFileSync(file, good + `{"schema_version":"0.18.0","event":{"type":"matrix.updated","revision":1}}\n`)
      const error = yield* Effect.flip(matrixStateOfEventsFile(file))
      assert.strictEqual(error._tag, "MatrixError")
      assert.match(error.message, new RegExp(`^matrix checkpoint at byte ${good.length} does not decode: `))
    }).pipe(Effect.provide(SessionFs.layerNode)))
})

describe("MatrixState.matrixState", () => {
  it.effect("replays a session's log, buffered appends included", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot()
      const log = yield* EventLog.open({ sessionsDir: root, sessionId: "s" })
      const h = history("m")
      for (const s of h.slice(0, 3)) yield* log.append(updated(s))
      const state = yield* matrixState(log)
      assert.deepStrictEqual(state.get("m"), h[2])
    }).pipe(Effect.provide(layer)))

  it.effect("after several cap rewrites yields the latest snapshot per id and retained turns still reconstruct", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot()
      const a = history("alpha")
      const b = history("beta")
      const appended: Array<ThreadEvent> = []
      const turns = new Map<number, ReadonlyArray<ThreadEvent>>()
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* EventLog.open({ sessionsDir: root, sessionId: "cap", maxEvents: 12 })
        const append = (e: ThreadEvent) => Effect.andThen(log.append(e), Effect.sync(() => appended.push(e)))
        // alpha's whole life happens first, outside any turn: only its checkpoint can survive.
        for (const s of a) yield* append(updated(s))
        for (let n = 1; n <= 12; n++) {
          // beta moves on every other turn, alternately inside and between turns.
          const next = n % 2 === 0 ? b[n / 2 - 1] : undefined
          const inside = next !== undefined && n % 4 === 0 ? [updated(next)] : []
          if (next !== undefined && inside.length === 0) yield* append(updated(next))
          const events = turn(`turn ${n}`, inside)
          for (const e of events) yield* append(e)
          turns.set(n, events)
        }
      }))
      const summaries = fs.readdirSync(path.join(root, "cap", "derived")).filter((n) => n.startsWith("eviction-"))
      assert.isAtLeast(summaries.length, 3, "several cap rewrites happened")
      const onDisk = fs.readFileSync(path.join(root, "cap", "events.jsonl"), "utf8").split("\n")
      const matrixLines = onDisk.filter((l) => l.includes(`"matrix.updated"`)).length
      const appendedMatrix = appended.filter((e) => e.type === "matrix.updated").length
      assert.isBelow(matrixLines, appendedMatrix, "matrix checkpoints were evicted")

      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* EventLog.open({ sessionsDir: root, sessionId: "cap", maxEvents: 12 })
        const state = yield* matrixState(log)
        assert.deepStrictEqual([...state.keys()], ["alpha", "beta"])
        assert.deepStrictEqual(state.get("alpha"), a[a.length - 1])
        assert.deepStrictEqual(state.get("beta"), b[5])
        const base = (yield* log.manifest).retained_turn_base ?? 1
        assert.isAbove(base, 1)
        for (let n = base; n <= 12; n++) {
          const reconstructed = yield* log.reconstructTurn(n)
          assert.deepStrictEqual(reconstructed.events, turns.get(n))
          assert.strictEqual(reconstructed.skipped, 0)
        }
        const evicted = yield* Effect.flip(log.reconstructTurn(1))
        assert.strictEqual(evicted._tag, "TurnEvicted")
      }))
    }).pipe(Effect.provide(layer)))
})
