/**
 * The replicator against the test fleet: every complete line of a session's log lands in the
 * fleet once, byte for byte, with its cursor; an unterminated tail waits; a cap rewrite during
 * replication opens a new epoch; a conflicting line is reported and the stored one kept; lines
 * `jsonb` cannot hold keep their bytes; the other files are mirrored.
 */
import { assert, describe, it } from "@effect/vitest"
import { MAX_BATCH_RETRIES, replicateSession, replicateStore } from "@logbook/fleet"
import type { ReplicationConflict } from "@logbook/fleet"
import type { SessionLog } from "@logbook/store"
import { SessionFs, StoreIoError } from "@logbook/store"
import {
  ev,
  fleetCursor,
  fleetLines,
  layerFreshFleet,
  localLines,
  nodeLayer,
  openLog,
  pathsOf,
  sessionsRoot,
  turn
} from "@logbook/testkit"
import { Effect, Exit, Layer, Ref } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as path from "node:path"

const options = { originHost: "test-host" }

const appendTurns = (log: SessionLog, n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < n; i++) {
      for (const e of turn(`message ${i}`)) yield* log.append(e)
    }
  })

const defined = <A>(value: A | undefined): A => {
  assert.isDefined(value)
  return value as A
}

describe("Replicator", () => {
  it.layer(Layer.merge(layerFreshFleet, nodeLayer()))((it) => {
    it.effect("replicates every complete line once, byte for byte, and a second pass inserts nothing", () =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("repl-basic")
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "basic")
          yield* log.append(ev.threadStarted())
          yield* appendTurns(log, 5)
          yield* log.flush
        }))
        const first = yield* replicateStore(root, { ...options, maxBatchLines: 4 })
        const local = localLines(pathsOf(root, "basic").events)
        assert.strictEqual(first.inserted, local.length)
        assert.deepStrictEqual(yield* fleetLines("basic", 0), local)
        const cursor = yield* fleetCursor("basic")
        assert.deepStrictEqual(cursor, { epoch: 0, offset: fs.statSync(pathsOf(root, "basic").events).size })
        const second = yield* replicateStore(root, options)
        assert.strictEqual(second.inserted, 0)
        assert.deepStrictEqual(yield* fleetLines("basic", 0), local)
        const sql = yield* SqlClient.SqlClient
        const types = yield* sql<{ readonly event_type: string | null; readonly turn: bigint | number | null }>`
          select event_type, turn from events where session_id = 'basic' order by byte_offset`
        assert.deepStrictEqual(types.slice(0, 4).map((r) => [r.event_type, r.turn === null ? null : Number(r.turn)]), [
          ["thread.started", null],
          ["turn.started", 1],
          ["item.completed", 1],
          ["turn.completed", 1]
        ])
        assert.strictEqual(Number(types.at(-1)?.turn), 5)
      }))

    it.effect("an unterminated last line waits for its newline", () =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("repl-torn")
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "torn")
          yield* appendTurns(log, 1)
          yield* log.flush
        }))
        const events = pathsOf(root, "torn").events
        const complete = fs.statSync(events).size
        fs.appendFileSync(events, "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"err")
        yield* replicateStore(root, options)
        assert.deepStrictEqual(yield* fleetCursor("torn"), { epoch: 0, offset: complete })
        fs.appendFileSync(events, "or\",\"message\":\"late\"}}\n")
        const report = yield* replicateStore(root, options)
        assert.strictEqual(report.inserted, 1)
        assert.deepStrictEqual(yield* fleetLines("torn", 0), localLines(events))
      }))

    it.effect("a line jsonb cannot hold keeps its exact bytes with a null event", () =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("repl-nul")
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "nul")
          yield* appendTurns(log, 1)
          yield* log.flush
        }))
        const events = pathsOf(root, "nul").events
        const nul = "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"error\",\"message\":\"a\\u0000b\"}}"
        fs.appendFileSync(events, `${nul}\n\u00ff\ufffe not json\n`)
        yield* replicateStore(root, options)
        assert.deepStrictEqual(yield* fleetLines("nul", 0), localLines(events))
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<
          { readonly event: unknown; readonly line: Uint8Array; readonly event_type: string | null }
        >`
          select event, line, event_type from events where session_id = 'nul' order by byte_offset desc limit 2`
        assert.strictEqual(rows[1]?.event, null)
        assert.strictEqual(rows[1]?.event_type, "error")
        assert.strictEqual(new TextDecoder().decode(rows[1]?.line), nul)
        assert.strictEqual(rows[0]?.event, null)
      }))

    it.effect("a cap rewrite during replication opens a new epoch whose lines match the rewritten log", () =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("repl-cap")
        const events = pathsOf(root, "cap").events
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "cap", { maxEvents: 40 })
          yield* log.append(ev.threadStarted())
          yield* appendTurns(log, 8)
          yield* log.flush
          const before = localLines(events)
          const rewritten = yield* Ref.make(false)
          // After the first committed batch, the writer goes over its cap and rewrites the log.
          const report = yield* replicateSession(root, "cap", {
            ...options,
            maxBatchLines: 5,
            onProgress: () =>
              Effect.gen(function*() {
                if (yield* Ref.getAndSet(rewritten, true)) return
                yield* appendTurns(log, 8)
                yield* log.flush
              }).pipe(Effect.orDie)
          })
          assert.isTrue(yield* Ref.get(rewritten))
          assert.strictEqual(report.epoch, 1)
          assert.strictEqual(report.epochsStarted, 2)
          const epoch0 = yield* fleetLines("cap", 0)
          assert.isAbove(epoch0.length, 0)
          assert.deepStrictEqual(epoch0, before.slice(0, epoch0.length))
          assert.deepStrictEqual(yield* fleetLines("cap", 1), localLines(events))
          const sql = yield* SqlClient.SqlClient
          const epochs = yield* sql<{ readonly epoch: number; readonly retained_turn_base: bigint | number }>`
            select epoch, retained_turn_base from session_epochs where session_id = 'cap' order by epoch`
          assert.strictEqual(epochs.length, 2)
          assert.isAbove(Number(epochs[1]?.retained_turn_base), Number(epochs[0]?.retained_turn_base))
          const current = yield* sql<{ readonly current_epoch: number }>`
            select current_epoch from sessions where session_id = 'cap'`
          assert.strictEqual(current[0]?.current_epoch, 1)
        }))
      }))

    it.effect("a line that differs from the stored one is reported and never overwritten", () =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("repl-conflict")
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "conflict")
          yield* appendTurns(log, 3)
          yield* log.flush
        }))
        const events = pathsOf(root, "conflict").events
        yield* replicateStore(root, options)
        const stored = yield* fleetLines("conflict", 0)
        // The cursor is lost and the local log changed in place: the fleet keeps what it has.
        const sql = yield* SqlClient.SqlClient
        yield* sql`delete from replication_cursors where session_id = 'conflict'`
        const bytes = fs.readFileSync(events)
        const target = defined(stored[4])
        const at = bytes.indexOf("message 1", target.offset)
        bytes.write("MESSAGE 1", at)
        fs.writeFileSync(events, bytes)
        const reported: Array<ReplicationConflict> = []
        const report = yield* replicateStore(root, {
          ...options,
          onConflict: (c) => Effect.sync(() => reported.push(c))
        })
        assert.strictEqual(report.conflicts.length, 1)
        assert.strictEqual(reported.length, 1)
        const conflict = defined(report.conflicts[0])
        assert.strictEqual(conflict._tag, "ReplicationConflict")
        assert.strictEqual(conflict.offset, target.offset)
        assert.strictEqual(conflict.storedSha256, target.sha256)
        assert.notStrictEqual(conflict.localSha256, target.sha256)
        assert.deepStrictEqual(yield* fleetLines("conflict", 0), stored)
        assert.deepStrictEqual(yield* fleetCursor("conflict"), { epoch: 0, offset: target.offset })
      }))

    it.effect("the session's other files are mirrored, replaced when changed and removed when gone", () =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("repl-files")
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "files")
          yield* appendTurns(log, 2)
          yield* log.flush
        }))
        const dir = pathsOf(root, "files").dir
        fs.mkdirSync(path.join(dir, "derived"), { recursive: true })
        fs.writeFileSync(path.join(dir, "derived", "note.json"), "{\"a\":1}")
        fs.symlinkSync("/etc/passwd", path.join(dir, "derived", "link.json"))
        yield* replicateStore(root, options)
        const sql = yield* SqlClient.SqlClient
        const listed = () =>
          sql<{ readonly path: string; readonly content: Uint8Array; readonly size: bigint | number }>`
            select path, content, size from files where session_id = 'files' order by path`.pipe(Effect.orDie)
        const first = yield* listed()
        const paths = first.map((r) => r.path)
        assert.include(paths, "manifest.json")
        assert.include(paths, "derived/note.json")
        assert.notInclude(paths, "derived/link.json")
        assert.notInclude(paths, "events.jsonl")
        fs.writeFileSync(path.join(dir, "derived", "note.json"), "{\"a\":22}")
        yield* replicateStore(root, options)
        const note = (yield* listed()).find((r) => r.path === "derived/note.json")
        assert.strictEqual(new TextDecoder().decode(note?.content), "{\"a\":22}")
        assert.strictEqual(Number(note?.size), 8)
        fs.rmSync(path.join(dir, "derived", "note.json"))
        const report = yield* replicateStore(root, options)
        assert.strictEqual(report.sessions[0]?.filesRemoved, 1)
        assert.notInclude((yield* listed()).map((r) => r.path), "derived/note.json")
      }))

    it.effect("a session whose batches always start over fails with ReplicationGaveUp naming it and why", () =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("repl-gaveup")
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "restless")
          yield* appendTurns(log, 2)
          yield* log.flush
        }))
        // Every read comes back short, as if a cap rewrite shrank the log under each one.
        const real = yield* SessionFs
        let reads = 0
        const shrinking = SessionFs.of({
          ...real,
          readRange: (file) =>
            Effect.suspend(() => {
              reads++
              return Effect.fail(
                new StoreIoError({ operation: "readRange", path: file, code: "UNEXPECTED_EOF", detail: "short read" })
              )
            })
        })
        const exit = yield* replicateSession(root, "restless", options).pipe(
          Effect.provideService(SessionFs, shrinking),
          Effect.exit
        )
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
        assert.strictEqual(error?._tag, "Fail")
        const failure = error?._tag === "Fail" ? error.error : undefined
        assert.strictEqual(failure?._tag, "ReplicationGaveUp")
        assert.include(failure?.message ?? "", "session restless")
        assert.include(failure?.message ?? "", "the log shrank while it was read")
        assert.strictEqual(reads, MAX_BATCH_RETRIES)
      }))

    it.effect("batches are bounded by bytes, and a line longer than a batch is taken whole", () =>
      Effect.gen(function*() {
        const { root } = yield* sessionsRoot("repl-batches")
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* openLog(root, "batches")
          yield* appendTurns(log, 10)
          yield* log.append(ev.msg("z".repeat(5000)))
          yield* log.flush
        }))
        const events = pathsOf(root, "batches").events
        const size = fs.statSync(events).size
        const batches: Array<number> = []
        yield* replicateStore(root, {
          ...options,
          maxBatchBytes: 512,
          onProgress: (p) => Effect.sync(() => batches.push(p.offset))
        })
        // Every batch but the long line's ends within 512 bytes of where it started.
        let previous = 0
        for (const end of batches.slice(0, -1)) {
          assert.isAtMost(end - previous, 512)
          previous = end
        }
        assert.isAbove(batches.length, Math.floor((size - 5100) / 512))
        assert.strictEqual(batches.at(-1), size)
        assert.deepStrictEqual(yield* fleetLines("batches", 0), localLines(events))
      }))
  })
})
