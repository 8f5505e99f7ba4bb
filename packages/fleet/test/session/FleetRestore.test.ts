/**
 * Reading sessions back from the fleet, at the library level: a log longer than one page of lines
 * (with bytes that are not UTF-8) restores byte for byte; a gap between lines, an unsafe file
 * path or a file that does not match its digest stops the restore with nothing left behind;
 * an existing session is never overwritten; stale replicated metadata is replaced by a rescan of
 * the replicated lines, as locally; a session without a pack is reported as such.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  FLEET_LINE_PAGE,
  type FleetTarget,
  inspectFleetSession,
  replicateSession,
  restoreFleetSession,
  verifyFleetPack
} from "@logbook/fleet"
import { inspectSession, writeAuditPack } from "@logbook/projections"
import {
  appendAll,
  ev,
  fleetTestTarget,
  layerFreshFleet,
  nodeLayer,
  openLog,
  sessionsRoot,
  turn
} from "@logbook/testkit"
import { Effect, Layer } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as path from "node:path"

/** A completed session `id` below `root` with `turns` turns, then one line of raw non-UTF-8 bytes. */
const recordSession = (root: string, id: string, turns: number) =>
  Effect.scoped(Effect.gen(function*() {
    const log = yield* openLog(root, id)
    const events = Array.from({ length: turns }, (_, i) => turn(`message ${i}`, `more ${i}`)).flat()
    yield* appendAll(log, [ev.threadStarted(), ...events, ev.threadCompleted()])
    yield* log.complete
  })).pipe(Effect.tap(() =>
    Effect.sync(() => {
      fs.appendFileSync(path.join(root, id, "events.jsonl"), Buffer.from([0xff, 0xfe, 0x20, 0x7b, 0x0a]))
      fs.mkdirSync(path.join(root, id, "derived", "notes"), { recursive: true })
      fs.writeFileSync(path.join(root, id, "derived", "notes", "a.txt"), "alpha\n")
    })
  ))

/** A session recorded in a fresh local store and replicated into the fleet. */
const replicated = (id: string, turns = 3) =>
  Effect.gen(function*() {
    const { base, root } = yield* sessionsRoot("fleet-restore")
    yield* recordSession(root, id, turns)
    const replication = yield* replicateSession(root, id, { originHost: "ci-1" })
    assert.isUndefined(replication.conflict)
    const target: FleetTarget = yield* fleetTestTarget
    return { base, root, target }
  })

const filesBelow = (dir: string, relative = ""): Array<string> =>
  fs.readdirSync(path.join(dir, relative), { withFileTypes: true }).flatMap((e) => {
    const child = relative === "" ? e.name : `${relative}/${e.name}`
    return e.isDirectory() ? filesBelow(dir, child) : [child]
  })

describe("FleetRestore", () => {
  it.layer(Layer.merge(layerFreshFleet, nodeLayer()), { timeout: 120_000 })((it) => {
    it.effect("a log of several pages, with bytes that are not UTF-8, restores byte for byte", () =>
      Effect.gen(function*() {
        const { base, root, target } = yield* replicated("long", 150)
        const lines = fs.readFileSync(path.join(root, "long", "events.jsonl")).toString("latin1").split("\n")
        assert.isAbove(lines.length, FLEET_LINE_PAGE * 2)
        const into = path.join(base, "restored")
        const result = yield* restoreFleetSession(target, "long", into)
        assert.strictEqual(result.dir, path.join(into, "long"))
        assert.strictEqual(result.lines, lines.length - 1)
        const original = filesBelow(path.join(root, "long")).sort()
        assert.deepStrictEqual(filesBelow(result.dir).sort(), original)
        for (const file of original) {
          assert.isTrue(
            fs.readFileSync(path.join(result.dir, file)).equals(fs.readFileSync(path.join(root, "long", file))),
            file
          )
        }
        assert.deepStrictEqual(fs.readdirSync(into), ["long"])
      }))

    it.effect("after a cap rewrite the latest epoch restores byte for byte and its pack verifies", () =>
      Effect.gen(function*() {
        const { base, root } = yield* sessionsRoot("fleet-cap")
        const target: FleetTarget = yield* fleetTestTarget
        const turns = (from: number, n: number) =>
          Array.from({ length: n }, (_, i) => turn(`message ${from + i}`)).flat()
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "cap", { maxEvents: 40 })
          yield* appendAll(log, [ev.threadStarted(), ...turns(0, 8)])
          yield* log.flush
          yield* replicateSession(root, "cap", { originHost: "ci-1" })
          yield* appendAll(log, turns(8, 12))
          yield* log.complete
        }))
        yield* writeAuditPack(root, "cap")
        const replication = yield* replicateSession(root, "cap", { originHost: "ci-1" })
        assert.isAtLeast(replication.epoch, 1)
        const into = path.join(base, "restored")
        const result = yield* restoreFleetSession(target, "cap", into)
        const original = filesBelow(path.join(root, "cap")).sort()
        assert.deepStrictEqual(filesBelow(result.dir).sort(), original)
        for (const file of original) {
          assert.isTrue(
            fs.readFileSync(path.join(result.dir, file)).equals(fs.readFileSync(path.join(root, "cap", file))),
            file
          )
        }
        const verified = yield* verifyFleetPack(target, "cap")
        assert.isTrue(verified.result.verified, JSON.stringify(verified.result))
        assert.deepStrictEqual(verified.result.unaccounted, [])
      }))

    it.effect("a gap between lines stops the restore and leaves nothing behind", () =>
      Effect.gen(function*() {
        const { base, target } = yield* replicated("gap")
        const sql = yield* SqlClient.SqlClient
        yield* sql`delete from events where session_id = 'gap' and byte_offset = (
          select byte_offset from events where session_id = 'gap' order by byte_offset offset 3 limit 1)`
        const into = path.join(base, "restored")
        const error = yield* Effect.flip(restoreFleetSession(target, "gap", into))
        assert.strictEqual(error._tag, "FleetDataInvalid")
        assert.include(error.message, "gap")
        assert.deepStrictEqual(fs.readdirSync(into), [])
      }))

    it.effect("a file path that would leave the session is refused before anything is written", () =>
      Effect.gen(function*() {
        const { base, target } = yield* replicated("escape")
        const sql = yield* SqlClient.SqlClient
        yield* sql`insert into files (session_id, path, size, sha256, content)
          values ('escape', '../outside.txt', 1, 'x', convert_to('x', 'UTF8'))`
        const into = path.join(base, "restored")
        const error = yield* Effect.flip(restoreFleetSession(target, "escape", into))
        assert.strictEqual(error._tag, "FleetDataInvalid")
        assert.include(error.message, "'..' component")
        assert.isFalse(fs.existsSync(into))
        assert.isFalse(fs.existsSync(path.join(base, "outside.txt")))
      }))

    it.effect("a file whose content does not match its stored digest stops the restore", () =>
      Effect.gen(function*() {
        const { base, target } = yield* replicated("edited")
        const sql = yield* SqlClient.SqlClient
        yield* sql`update files set content = convert_to('omega' || chr(10), 'UTF8')
          where session_id = 'edited' and path = 'derived/notes/a.txt'`
        const into = path.join(base, "restored")
        const error = yield* Effect.flip(restoreFleetSession(target, "edited", into))
        assert.strictEqual(error._tag, "FleetDataInvalid")
        assert.include(error.message, "derived/notes/a.txt")
        assert.deepStrictEqual(fs.readdirSync(into), [])
      }))

    it.effect("an existing session is never overwritten", () =>
      Effect.gen(function*() {
        const { root, target } = yield* replicated("exists")
        const before = fs.readFileSync(path.join(root, "exists", "events.jsonl"))
        const error = yield* Effect.flip(restoreFleetSession(target, "exists", root))
        assert.strictEqual(error._tag, "FleetRestoreTargetExists")
        assert.isTrue(fs.readFileSync(path.join(root, "exists", "events.jsonl")).equals(before))
        assert.deepStrictEqual(fs.readdirSync(root), ["exists"])
        const missing = yield* Effect.flip(restoreFleetSession(target, "nobody", root))
        assert.strictEqual(missing._tag, "FleetSessionNotFound")
      }))

    it.effect("stale replicated metadata is replaced by a rescan of the replicated lines, as locally", () =>
      Effect.gen(function*() {
        const { root, target } = yield* replicated("stale", 5)
        fs.rmSync(path.join(root, "stale", "index", "turns.json"))
        const sql = yield* SqlClient.SqlClient
        yield* sql`delete from files where session_id = 'stale' and path = 'index/turns.json'`
        const local = yield* inspectSession(root, "stale")
        const fleet = yield* inspectFleetSession(target, "stale")
        assert.isFalse(fleet.inspection.fresh)
        assert.isDefined(fleet.inspection.scan)
        assert.deepStrictEqual(fleet.inspection.effectiveEntries, local.effectiveEntries)
        assert.strictEqual(fleet.inspection.fileLen, local.fileLen)
        assert.deepStrictEqual(
          { ...fleet.inspection.effectiveManifest, updated_at: "" },
          { ...local.effectiveManifest, updated_at: "" }
        )
        assert.strictEqual(fleet.row.originHost, "ci-1")
      }))

    it.effect("a session without a replicated pack is reported as such", () =>
      Effect.gen(function*() {
        const { target } = yield* replicated("nopack")
        const error = yield* Effect.flip(verifyFleetPack(target, "nopack"))
        assert.strictEqual(error._tag, "FleetPackMissing")
      }))
  })
})
