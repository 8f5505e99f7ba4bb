/**
 * Read-only inspection and verification of sessions: clean logs verify clean, every kind of
 * damage is reported with its byte offsets, the effective view equals what `EventLog.open`
 * rebuilds, and nothing on disk is created, repaired or touched.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine } from "@logbook/domain"
import type { SessionLog } from "@logbook/store"
import { diskUsage } from "@logbook/store"
import { appendAll, editJson, ev, nodeLayer, openLog, pathsOf, sessionsRoot, turn } from "@logbook/testkit"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { checkLine, inspectSession } from "../../src/session/Inspection.ts"
import { findSession } from "../../src/session/SessionLookup.ts"
import { verifySession } from "../../src/session/Verification.ts"

/** A temporary workspace for one test, removed with its scope. */
const testRoot = () => sessionsRoot("projections")

const line = (e: ThreadEvent): string => encodeLine(e) + "\n"
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

/** Every file below `dir` with its bytes and mtime, to prove a read-only operation changed nothing. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name)
      const st = fs.lstatSync(p)
      if (st.isDirectory()) {
        out[p] = `dir ${st.mode}`
        walk(p)
      } else {
        out[p] = `${st.mode} ${st.mtimeMs} ${fs.readFileSync(p).toString("base64")}`
      }
    }
  }
  walk(dir)
  return out
}

/** Writes a session through EventLog and closes it. */
const record = (
  root: string,
  id: string,
  events: ReadonlyArray<ThreadEvent>,
  extra?: (log: SessionLog) => Effect.Effect<void, unknown>
) =>
  Effect.scoped(Effect.gen(function*() {
    const log = yield* openLog(root, id)
    yield* appendAll(log, events)
    if (extra !== undefined) yield* Effect.orDie(extra(log))
  }))

const kinds = (findings: ReadonlyArray<{ readonly kind: string }>) => findings.map((f) => f.kind)

describe("Verify", () => {
  it.effect("derived/ or index/ that is not a directory, and a non-file metadata path, are findings", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* testRoot()
      const cases: ReadonlyArray<readonly [string, (p: ReturnType<typeof pathsOf>) => void, RegExp]> = [
        ["derived-file", (p) => {
          fs.rmSync(p.derivedDir, { recursive: true })
          fs.writeFileSync(p.derivedDir, "x")
        }, /^derived\/ is a file, not a directory/],
        ["derived-link", (p) => {
          fs.rmSync(p.derivedDir, { recursive: true })
          fs.symlinkSync(outside, p.derivedDir)
        }, /^derived\/ is a symbolic link, not a directory.*unlinks it/],
        ["manifest-dir", (p) => {
          fs.rmSync(p.manifest)
          fs.mkdirSync(p.manifest)
        }, /^manifest\.json is a directory, not a regular file.*moves it aside/],
        [
          "marker-link",
          (p) => fs.symlinkSync(outside, p.marker),
          /^index\/pending-cap-rewrite\.json is a symbolic link/
        ]
      ]
      for (const [id, plant, message] of cases) {
        yield* record(root, id, turn("a"))
        plant(pathsOf(root, id))
        const report = yield* verifySession(root, id)
        const derived = report.findings.filter((f) => f.kind === "derived-path")
        assert.strictEqual(derived.length, 1, `${id}: ${JSON.stringify(report.findings)}`)
        assert.match(derived[0]?.message ?? "", message, id)
      }
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a session written by EventLog verifies clean and its stored metadata is used as is", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      yield* record(root, "s", [ev.threadStarted(), ...turn("a", "b"), ...turn("c"), ev.turnStarted()])
      const report = yield* verifySession(root, "s")
      assert.deepStrictEqual(report.findings, [])
      assert.strictEqual(report.scan.state.eventCount, 9)
      assert.strictEqual(report.scan.state.turnCount, 2)
      assert.isTrue(report.scan.state.inTurn)
      const inspection = yield* inspectSession(root, "s")
      assert.isTrue(inspection.fresh)
      assert.isUndefined(inspection.scan)
      assert.deepStrictEqual(inspection.effectiveEntries.map((e) => e.turn_number), [1, 2, 3])
      assert.isFalse(inspection.live)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a torn tail is reported once with its offset, and verification writes nothing", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      yield* record(root, "s", turn("a"))
      const paths = pathsOf(root, "s")
      const before = fs.statSync(paths.events).size
      fs.appendFileSync(paths.events, "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"turn.sta")
      const snap = snapshot(root)
      const report = yield* verifySession(root, "s")
      assert.deepStrictEqual(snapshot(root), snap)
      assert.deepStrictEqual(report.scan.tornTail?.offset, before)
      assert.strictEqual(report.scan.malformedCount, 0)
      assert.deepStrictEqual(kinds(report.findings), ["torn-tail", "manifest-mismatch"])
      assert.include(report.findings[1]?.message ?? "", "persisted_file_len")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("malformed and undecodable lines are listed with their byte offsets and reasons", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      const paths = pathsOf(root, "raw")
      fs.mkdirSync(paths.dir, { recursive: true })
      const lines = [
        line(ev.turnStarted()),
        "not json at all\n",
        "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"turn.completed\"}}\n",
        "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"item.completed\",\"item\":{\"id\":\"x\",\"type\":\"hologram\"}}}\n",
        "   \n",
        line(ev.completed())
      ]
      fs.writeFileSync(paths.events, lines.join(""))
      const offsets = lines.map((_, i) => lines.slice(0, i).join("").length)
      const snap = snapshot(root)
      const report = yield* verifySession(root, "raw")
      assert.deepStrictEqual(snapshot(root), snap)
      assert.deepStrictEqual(report.scan.malformed.map((p) => p.offset), [offsets[1], offsets[2]])
      assert.include(report.scan.malformed[0]?.reason ?? "", "JSON")
      assert.include(report.scan.malformed[1]?.reason ?? "", "usage")
      assert.deepStrictEqual(report.scan.undecodable.map((p) => p.offset), [offsets[3]])
      assert.include(report.scan.undecodable[0]?.reason ?? "", "item.completed")
      // The undecodable line counts (the scan accepts its envelope); the skipped ones do not.
      assert.strictEqual(report.scan.state.eventCount, 3)
      assert.strictEqual(report.scan.blankLines, 1)
      assert.deepStrictEqual(kinds(report.findings), [
        "malformed-lines",
        "undecodable-lines",
        "manifest-missing",
        "index-missing"
      ])
      // Read-only: no lock file, manifest or index was created.
      assert.isFalse(fs.existsSync(paths.lock))
      assert.isFalse(fs.existsSync(paths.manifest))
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("metadata damage that open's fast path trusts is reported field by field", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      yield* record(root, "s", [...turn("a"), ...turn("b", "c"), ev.turnStarted(), ev.msg("d")])
      const paths = pathsOf(root, "s")
      editJson(paths.manifest, (m) => ({ ...m, event_count: Number(m.event_count) + 5, status: "completed" }))
      editJson(paths.turns, (index) => {
        const entries = index.entries as Array<Record<string, number>>
        return { entries: entries.map((e, i) => i === 1 ? { ...e, end_offset: (e.end_offset ?? 0) - 1 } : e) }
      })
      const report = yield* verifySession(root, "s")
      assert.deepStrictEqual(kinds(report.findings), ["manifest-mismatch", "manifest-mismatch", "index-mismatch"])
      assert.include(report.findings[0]?.message ?? "", "event_count")
      assert.include(report.findings[1]?.message ?? "", "status")
      assert.include(report.findings[2]?.message ?? "", "entry 2")
      // Counters and spans are not re-derived on the fast path, so an open would adopt them as is.
      const inspection = yield* inspectSession(root, "s")
      assert.isTrue(inspection.fresh)
      assert.strictEqual(inspection.effectiveManifest.status, "completed")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a manifest whose session_id is not the directory's session is a mismatch", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      yield* record(root, "mine", [...turn("a")])
      yield* record(root, "a/b", [...turn("a")])
      assert.deepStrictEqual(kinds((yield* verifySession(root, "mine")).findings), [])
      assert.deepStrictEqual(kinds((yield* verifySession(root, "a/b")).findings), [])
      editJson(pathsOf(root, "mine").manifest, (m) => ({ ...m, session_id: "someone-else" }))
      const report = yield* verifySession(root, "mine")
      assert.deepStrictEqual(kinds(report.findings), ["manifest-mismatch"])
      assert.include(report.findings[0]?.message ?? "", `manifest session_id is "someone-else"`)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("with stale metadata the effective view is exactly what open rebuilds by rescanning", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      yield* record(root, "s", [...turn("a"), ...turn("b", "c"), ev.turnStarted(), ev.msg("d")])
      const paths = pathsOf(root, "s")
      editJson(paths.manifest, (m) => ({ ...m, persisted_file_len: 7, event_count: 1, turn_count: 0 }))
      fs.appendFileSync(paths.events, line(ev.msg("e")) + line(ev.completed()) + line(ev.turnStarted()))
      const inspection = yield* inspectSession(root, "s")
      assert.isFalse(inspection.fresh)
      const reopened = yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "s")
        return { manifest: yield* log.manifest, entries: yield* log.turnIndex }
      }))
      const m = inspection.effectiveManifest
      const r = reopened.manifest
      assert.deepStrictEqual(
        [m.turn_count, m.event_count, m.status, m.in_turn, m.retained_turn_base, m.persisted_file_len],
        [r.turn_count, r.event_count, r.status, r.in_turn, r.retained_turn_base, r.persisted_file_len]
      )
      assert.deepStrictEqual([m.turn_count, m.event_count, m.in_turn], [3, 12, true])
      const spans = (
        es: ReadonlyArray<
          {
            readonly turn_number: number
            readonly start_offset: number
            readonly end_offset: number
            readonly event_count: number
          }
        >
      ) => es.map((e) => [e.turn_number, e.start_offset, e.end_offset, e.event_count])
      assert.deepStrictEqual(spans(inspection.effectiveEntries), spans(reopened.entries))
      // Open republished the metadata: the session verifies clean again.
      assert.deepStrictEqual((yield* verifySession(root, "s")).findings, [])
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a leftover cap-rewrite marker and a planted manifest link are findings", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* testRoot()
      yield* record(root, "s", turn("a"))
      const paths = pathsOf(root, "s")
      fs.writeFileSync(paths.marker, JSON.stringify({ previous_file_len: 10, new_file_len: 5, retained_turn_base: 2 }))
      fs.writeFileSync(path.join(outside, "m.json"), fs.readFileSync(paths.manifest))
      fs.rmSync(paths.manifest)
      fs.symlinkSync(path.join(outside, "m.json"), paths.manifest)
      const report = yield* verifySession(root, "s")
      assert.deepStrictEqual(kinds(report.findings), ["manifest-invalid", "pending-cap-rewrite"])
      assert.include(report.findings[0]?.message ?? "", "cannot be read")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a missing session fails SessionNotFound and nothing is created", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      const exit = yield* Effect.exit(verifySession(root, "ghost"))
      assert.isTrue(Exit.isFailure(exit))
      const error = yield* Effect.flip(findSession(root, "ghost"))
      assert.strictEqual(error._tag, "SessionNotFound")
      assert.include(error.message, "ghost")
      assert.isFalse(fs.existsSync(root))
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a session directory replaced by a symlink is refused, not followed", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* testRoot()
      yield* record(root, "real", turn("a"))
      fs.symlinkSync(pathsOf(root, "real").dir, path.join(root, "alias"))
      const error = yield* Effect.flip(findSession(root, "alias"))
      assert.strictEqual(error._tag, "StoreIoError")
      assert.isTrue(fs.readdirSync(outside).length === 0)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a session whose thread.completed was evicted by a cap rewrite verifies clean, and so does its rescan", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      yield* Effect.scoped(Effect.flatMap(
        openLog(root, "capped", { maxEvents: 2, maxBytes: 0 }),
        (log) => appendAll(log, [ev.turnStarted(), ev.threadCompleted(), ev.completed()])
      ))
      const report = yield* verifySession(root, "capped")
      assert.deepStrictEqual(report.findings, [], "verify agrees with what the rewrite published")
      assert.strictEqual(report.scan.state.status, "completed")
      assert.strictEqual(report.scan.turnBase, 2)
      fs.rmSync(pathsOf(root, "capped").manifest)
      const inspection = yield* inspectSession(root, "capped")
      assert.strictEqual(inspection.effectiveManifest.status, "completed", "a rescan keeps the status")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("after a rewrite whose marker and metadata were lost, verify numbers turns as open does", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      const p = pathsOf(root, "lost")
      const matrix = (revision: number): ThreadEvent => ({
        type: "matrix.updated",
        spec: { id: "m", tasks: [], resources: {} },
        lifecycle: "running",
        tasks: [],
        generation: null,
        revision
      })
      let before = { manifest: "", turns: "" }
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "lost", { maxEvents: 9, maxBytes: 0, evictionLowWater: 1 })
        yield* appendAll(log, [matrix(1), ...turn("one"), matrix(2), ...turn("two")])
        yield* log.flush
        before = { manifest: fs.readFileSync(p.manifest, "utf8"), turns: fs.readFileSync(p.turns, "utf8") }
        yield* appendAll(log, turn("three"))
      }))
      const published = JSON.parse(fs.readFileSync(p.manifest, "utf8")) as { retained_turn_base: number }
      assert.isAbove(published.retained_turn_base, 1, "the fixture evicted a turn")
      fs.writeFileSync(p.manifest, before.manifest)
      fs.writeFileSync(p.turns, before.turns)
      const report = yield* verifySession(root, "lost")
      assert.strictEqual(report.scan.turnBase, published.retained_turn_base)
      assert.strictEqual(report.inspection.effectiveEntries[0]?.turn_number, published.retained_turn_base)
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("a VT Code log with token counts beyond 2^53 inspects, opens and verifies alike", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      const paths = pathsOf(root, "vt")
      fs.mkdirSync(paths.dir, { recursive: true })
      const completedWith = (tokens: string) =>
        `{"schema_version":"0.18.0","event":{"type":"turn.completed","usage":{"input_tokens":${tokens},` +
        `"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":0}}}\n`
      const lines = [
        line(ev.turnStarted()),
        completedWith("9007199254740993"),
        line(ev.turnStarted()),
        completedWith("18446744073709551615"),
        line(ev.turnStarted()),
        completedWith("18446744073709551616")
      ]
      fs.writeFileSync(paths.events, lines.join(""))
      const inspection = yield* inspectSession(root, "vt")
      const reopened = yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* openLog(root, "vt")
        return { manifest: yield* log.manifest, entries: yield* log.turnIndex }
      }))
      const m = inspection.effectiveManifest
      const r = reopened.manifest
      assert.deepStrictEqual([m.turn_count, m.event_count, m.in_turn], [2, 5, true])
      assert.deepStrictEqual([r.turn_count, r.event_count, r.in_turn], [2, 5, true])
      assert.deepStrictEqual(inspection.effectiveEntries, reopened.entries)
      const report = yield* verifySession(root, "vt")
      assert.deepStrictEqual(kinds(report.findings), ["malformed-lines"])
      assert.deepStrictEqual(report.scan.malformed.map((p) => p.offset), [lines.slice(0, 5).join("").length])
      assert.strictEqual(report.scan.undecodableCount, 0, "the counts within u64 decode")
    }).pipe(Effect.provide(nodeLayer())))

  it.effect("disk usage counts the regular files of the session tree", () =>
    Effect.gen(function*() {
      const { root } = yield* testRoot()
      yield* record(root, "s", turn("a"))
      const paths = pathsOf(root, "s")
      const usage = yield* diskUsage(paths.dir)
      const expected = ["events.jsonl", "manifest.json", "session.lock", "index/turns.json"]
        .map((f) => fs.statSync(path.join(paths.dir, f)).size)
        .reduce((a, b) => a + b, 0)
      assert.deepStrictEqual(usage, { bytes: expected, files: 4 })
    }).pipe(Effect.provide(nodeLayer())))

  describe("checkLine", () => {
    it("tells blank, event, malformed and undecodable lines apart", () => {
      assert.strictEqual(checkLine(bytes("  \n"))._tag, "Blank")
      const event = checkLine(bytes(line(ev.msg("hi"))))
      assert.strictEqual(event._tag, "Event")
      const badUtf8 = checkLine(new Uint8Array([0x7b, 0xff, 0x7d, 0x0a]))
      assert.deepStrictEqual(badUtf8, { _tag: "Malformed", reason: "not valid UTF-8" })
      const badVersion = checkLine(bytes("{\"schema_version\":1,\"event\":{\"type\":\"turn.started\"}}"))
      assert.strictEqual(badVersion._tag, "Malformed")
      const array = checkLine(
        bytes("{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"turn.completed\",\"usage\":[]}}")
      )
      assert.strictEqual(array._tag, "Malformed")
      const unknown = checkLine(bytes("{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"tool.called\",\"a\":1}}"))
      assert.strictEqual(unknown._tag, "Event")
      const hologram = checkLine(
        bytes(
          "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"item.started\",\"item\":{\"id\":\"x\",\"type\":\"hologram\"}}}"
        )
      )
      assert.strictEqual(hologram._tag, "Undecodable")
    })
  })
})
