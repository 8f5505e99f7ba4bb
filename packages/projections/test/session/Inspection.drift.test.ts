/**
 * The inspector and the writer cannot drift apart: for every recovery fixture of the store's
 * recovery and crash suites — each way the metadata can be damaged or stale, torn tails, a cut
 * at every byte of the last lines (what a kill leaves), each crash window of a cap rewrite, a
 * rewrite whose marker and metadata were lost, and an evicted `thread.completed` — the manifest
 * and turn index `inspectSession` says `open` would arrive at equal what `EventLog.open` then
 * persists, timestamps aside.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Manifest, ThreadEvent, TurnEntry } from "@logbook/domain"
import { decodeManifestText, decodeTurnIndexText } from "@logbook/domain"
import type { SessionPaths } from "@logbook/store"
import { appendAll, editJson, ev, nodeLayer, openLog, pathsOf, sessionsRoot, turn } from "@logbook/testkit"
import { Effect, Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { inspectSession } from "../../src/session/Inspection.ts"

/** A temporary workspace for one test, removed with its scope. */
const testRoot = () => sessionsRoot("projections")

const ID = "drift"

const withoutTimestamps = (m: Manifest) => {
  const { created_at: _c, updated_at: _u, ...rest } = m
  return rest
}
const withoutTs = (entries: ReadonlyArray<TurnEntry>) => entries.map(({ ts: _ts, ...rest }) => rest)

const readManifest = (p: SessionPaths): Manifest => {
  const decoded = decodeManifestText(fs.readFileSync(p.manifest, "utf8"))
  if (Result.isFailure(decoded)) throw new Error(`${p.manifest}: ${decoded.failure.message}`)
  return decoded.success
}
const readIndex = (p: SessionPaths): ReadonlyArray<TurnEntry> => {
  const decoded = decodeTurnIndexText(fs.readFileSync(p.turns, "utf8"))
  if (Result.isFailure(decoded)) throw new Error(`${p.turns}: ${decoded.failure.message}`)
  return decoded.success
}

/** Inspects `root`/drift, then opens it (using it once, so a lazily checked index is settled) and compares. */
const assertNoDrift = (root: string, label: string) =>
  Effect.gen(function*() {
    const inspection = yield* inspectSession(root, ID)
    yield* Effect.scoped(Effect.flatMap(openLog(root, ID, { maxEvents: 0, maxBytes: 0 }), (log) => log.turnIndex))
    const p = pathsOf(root, ID)
    assert.deepStrictEqual(
      withoutTimestamps(inspection.effectiveManifest),
      withoutTimestamps(readManifest(p)),
      `${label}: manifest`
    )
    assert.deepStrictEqual(withoutTs(inspection.effectiveEntries), withoutTs(readIndex(p)), `${label}: turn index`)
    return inspection
  })

/** The reference session: a matrix prelude, turns with and without recorded timestamps, an out-of-turn record. */
const reference: ReadonlyArray<ThreadEvent> = [
  ev.threadStarted(),
  ev.matrixUpdated("m1", 1),
  ...turn("one", "uno"),
  ev.error("between turns"),
  ev.turnStarted("2026-01-02T03:04:05.000+00:00"),
  ev.msg("two"),
  ev.completed(),
  ...turn("three")
]

const writeReference = (root: string, events: ReadonlyArray<ThreadEvent> = reference) =>
  Effect.scoped(Effect.flatMap(openLog(root, ID, { maxEvents: 0, maxBytes: 0 }), (log) => appendAll(log, events)))

const setManifest = (p: SessionPaths, patch: Record<string, unknown>) =>
  editJson(p.manifest, (m) => ({ ...m, ...patch }))
const dropManifestKey = (p: SessionPaths, key: string) =>
  editJson(p.manifest, (m) => Object.fromEntries(Object.entries(m).filter(([k]) => k !== key)))
const editIndex = (p: SessionPaths, edit: (entries: Array<Record<string, number>>) => unknown) =>
  editJson(p.turns, (i) => ({ entries: edit(i["entries"] as Array<Record<string, number>>) }))

const damages: ReadonlyArray<readonly [string, (p: SessionPaths) => void]> = [
  ["intact metadata", () => {}],
  ["manifest.json is missing", (p) => fs.rmSync(p.manifest)],
  ["manifest.json is not JSON", (p) => fs.writeFileSync(p.manifest, "{\"session_id\":")],
  ["manifest.json lacks a required field", (p) => dropManifestKey(p, "status")],
  ["manifest.json has a negative counter", (p) => setManifest(p, { event_count: -1 })],
  ["index/turns.json is missing", (p) => fs.rmSync(p.turns)],
  ["index/turns.json has entries of the wrong shape", (p) => fs.writeFileSync(p.turns, "{\"entries\":[{}]}")],
  ["the manifest has no in_turn", (p) => dropManifestKey(p, "in_turn")],
  ["the manifest has no persisted_file_len", (p) => dropManifestKey(p, "persisted_file_len")],
  [
    "unannounced bytes",
    (p) =>
      fs.appendFileSync(
        p.events,
        `${JSON.stringify({ schema_version: "0.18.0", event: { type: "error", message: "x" } })}\n`
      )
  ],
  [
    "persisted_file_len is longer than the file",
    (p) => setManifest(p, { persisted_file_len: fs.statSync(p.events).size + 1 })
  ],
  [
    "an index entry ends past the file",
    (p) =>
      editIndex(
        p,
        (es) => es.map((e, i) => i === es.length - 1 ? { ...e, end_offset: Number(e["end_offset"]) + 5 } : e)
      )
  ],
  [
    "index entries overlap",
    (p) => editIndex(p, (es) => es.map((e, i) => i === 1 ? { ...e, start_offset: Number(e["start_offset"]) - 1 } : e))
  ],
  [
    "an index entry counts no events",
    (p) => editIndex(p, (es) => es.map((e, i) => i === 0 ? { ...e, event_count: 0 } : e))
  ],
  ["the manifest's retained_turn_base disagrees with the index", (p) => setManifest(p, { retained_turn_base: 2 })],
  ["turn_count disagrees with the index", (p) => setManifest(p, { turn_count: 7 })],
  ["in_turn disagrees with the index", (p) => setManifest(p, { in_turn: true })],
  ["the index is empty while turns were recorded", (p) => fs.writeFileSync(p.turns, "{\"entries\":[]}")],
  ["events.jsonl was deleted", (p) => fs.rmSync(p.events)],
  ["a torn last record", (p) => fs.appendFileSync(p.events, "{\"schema_version\":\"0.18.0\",\"ev")],
  ["a complete last record without its newline", (p) => {
    fs.appendFileSync(p.events, `${JSON.stringify({ schema_version: "0.18.0", event: { type: "turn.started" } })}`)
  }],
  ["a stale cap marker", (p) => {
    fs.writeFileSync(p.marker, JSON.stringify({ previous_file_len: 5, new_file_len: 3, retained_turn_base: 4 }))
  }],
  ["a cap marker matching the file, metadata stale", (p) => {
    const size = fs.statSync(p.events).size
    fs.writeFileSync(
      p.marker,
      JSON.stringify({ previous_file_len: size + 100, new_file_len: size, retained_turn_base: 3 })
    )
    setManifest(p, { persisted_file_len: size + 100 })
  }]
]

describe("Inspection drift against EventLog.open", () => {
  it.effect("every damaged, stale or intact metadata case: inspection equals what open persists", () =>
    Effect.gen(function*() {
      const { base } = yield* testRoot()
      for (const [name, damage] of damages) {
        const root = path.join(base, name.replace(/\W+/g, "-"))
        yield* writeReference(root)
        damage(pathsOf(root, ID))
        yield* assertNoDrift(root, name)
      }
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a cut at every byte of the last two lines (what a kill leaves): inspection equals what open persists", () =>
    Effect.gen(function*() {
      const { base } = yield* testRoot()
      const source = path.join(base, "source")
      yield* writeReference(source, [...reference, ev.turnStarted(), ev.msg("open turn")])
      const bytes = fs.readFileSync(pathsOf(source, ID).events)
      const text = bytes.toString("utf8").trimEnd()
      const secondLast = text.lastIndexOf("\n", text.lastIndexOf("\n") - 1) + 1
      for (let cut = secondLast; cut <= bytes.length; cut++) {
        const root = path.join(base, `cut-${cut}`)
        fs.cpSync(path.join(source, ID), path.join(root, ID), { recursive: true })
        fs.truncateSync(pathsOf(root, ID).events, cut)
        yield* assertNoDrift(root, `cut at ${cut}/${bytes.length}`)
        fs.rmSync(root, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(nodeLayer())))

  describe("cap rewrites", () => {
    /** Records a capped session; returns the metadata as it was just before the rewrite and the root. */
    const capped = (base: string, name: string, tail: ReadonlyArray<ThreadEvent> = turn("five")) =>
      Effect.gen(function*() {
        const root = path.join(base, name)
        const p = pathsOf(root, ID)
        let before: { manifest: string; turns: string } | undefined
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, ID, { maxEvents: 14, maxBytes: 0, evictionLowWater: 1 })
          yield* appendAll(log, [ev.matrixUpdated("m1", 1), ...turn("one"), ev.matrixUpdated("m1", 2), ...turn("two")])
          yield* appendAll(log, [...turn("three"), ...turn("four")])
          yield* log.flush
          before = { manifest: fs.readFileSync(p.manifest, "utf8"), turns: fs.readFileSync(p.turns, "utf8") }
          yield* appendAll(log, tail)
        }))
        if (before === undefined) throw new Error("no metadata before the rewrite")
        const manifest = readManifest(p)
        assert.isAbove(manifest.retained_turn_base ?? 1, 1, `${name}: the fixture evicted turns`)
        return { root, p, before }
      })

    it.effect("each crash window of a rewrite: inspection equals what open persists", () =>
      Effect.gen(function*() {
        const { base } = yield* testRoot()
        const windows: ReadonlyArray<
          readonly [string, (p: SessionPaths, before: { manifest: string; turns: string }) => void]
        > = [
          ["completed", () => {}],
          ["marker left, new metadata published", (p) => {
            const size = fs.statSync(p.events).size
            fs.writeFileSync(
              p.marker,
              JSON.stringify({
                previous_file_len: size + 1000,
                new_file_len: size,
                retained_turn_base: readManifest(p).retained_turn_base
              })
            )
          }],
          ["marker left, old metadata", (p, before) => {
            const size = fs.statSync(p.events).size
            const base = readManifest(p).retained_turn_base
            fs.writeFileSync(p.manifest, before.manifest)
            fs.writeFileSync(p.turns, before.turns)
            fs.writeFileSync(
              p.marker,
              JSON.stringify({ previous_file_len: size + 1000, new_file_len: size, retained_turn_base: base })
            )
          }],
          ["marker and new metadata lost", (p, before) => {
            fs.writeFileSync(p.manifest, before.manifest)
            fs.writeFileSync(p.turns, before.turns)
          }],
          ["marker, manifest and index lost", (p) => {
            fs.rmSync(p.manifest)
            fs.rmSync(p.turns)
          }]
        ]
        for (const [name, window] of windows) {
          const { before, p, root } = yield* capped(base, name.replace(/\W+/g, "-"))
          window(p, before)
          yield* assertNoDrift(root, name)
        }
      }).pipe(Effect.provide(nodeLayer())))

    it.effect("a rewrite that evicted thread.completed: inspection, open and a rescan all keep the status", () =>
      Effect.gen(function*() {
        const { base } = yield* testRoot()
        const { before, p, root } = yield* capped(base, "completed", [
          ev.turnStarted(),
          ev.threadCompleted(),
          ev.completed()
        ])
        assert.strictEqual(readManifest(p).status, "completed")
        yield* assertNoDrift(root, "after the rewrite")
        fs.writeFileSync(p.manifest, before.manifest)
        fs.writeFileSync(p.turns, before.turns)
        const inspection = yield* assertNoDrift(root, "marker and metadata lost")
        assert.strictEqual(inspection.effectiveManifest.status, "completed")
      }).pipe(Effect.provide(nodeLayer())))
  })
})
