/**
 * FIFOs planted where the CLI reads (issue 33, item 10): at one session's `derived/memory.json`, at
 * the search snapshot, and given as `pack verify --pack`, `--verify-key` or `pack create --sign`.
 * A blocked open ignores SIGINT and SIGTERM, so each command runs as a child of the built binary
 * (killed only when the test itself times out). Store-wide `facts` and `search` leave the hostile
 * session out and say so on stderr; the pack commands refuse the file.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { assertBuilt, run, runHere, sessionsOf, workspace } from "./harness.ts"

const plantFifo = (at: string) => {
  fs.rmSync(at, { force: true })
  execFileSync("mkfifo", ["-m", "600", at])
}

/** A workspace with two demo sessions, `hostile` (its memory view a FIFO) and `good`. */
const twoSessions = Effect.gen(function*() {
  const ws = yield* workspace
  for (const session of ["good", "hostile"]) {
    const demo = yield* runHere(["--workspace", ws, "demo", "--session", session, "--turns", "2"], { cwd: ws })
    assert.strictEqual(demo.code, 0, demo.stderr)
  }
  const hostileView = path.join(sessionsOf(ws), "hostile", "derived", "memory.json")
  plantFifo(hostileView)
  return { ws, hostileView }
})

describe("logbook and planted FIFOs", () => {
  it.effect(
    "facts and search leave out a session whose memory view is a FIFO and report it on stderr",
    () =>
      Effect.gen(function*() {
        assertBuilt()
        const { hostileView, ws } = yield* twoSessions
        const facts = yield* run(["facts"], { cwd: ws })
        assert.strictEqual(facts.code, 0, facts.stderr)
        assert.include(facts.stdout, "good  ")
        assert.notInclude(facts.stdout, "hostile  ")
        assert.include(facts.stderr, `skipped session hostile: cannot read ${hostileView}`)
        plantFifo(path.join(sessionsOf(ws), ".logbook-search-facts.idx"))
        const search = yield* run(["search", "retry", "--json"], { cwd: ws })
        assert.strictEqual(search.code, 0, search.stderr)
        const sessions = new Set(JSON.parse(search.stdout).map((r: { readonly path: string }) => r.path.split("/")[0]))
        assert.isFalse(sessions.has("hostile"))
        assert.include(search.stderr, "skipped session hostile")
      }),
    { timeout: 120_000 }
  )

  it.effect(
    "pack verify --pack, --verify-key and pack create --sign refuse a FIFO instead of blocking",
    () =>
      Effect.gen(function*() {
        assertBuilt()
        const { ws } = yield* twoSessions
        const fifo = path.join(ws, "hostile.fifo")
        plantFifo(fifo)
        const runs = yield* Effect.all([
          run(["pack", "verify", "good", "--pack", fifo], { cwd: ws }),
          run(["pack", "verify", "good", "--verify-key", fifo], { cwd: ws }),
          run(["pack", "create", "good", "--sign", fifo], { cwd: ws })
        ], { concurrency: 3 })
        for (const r of runs) {
          assert.strictEqual(r.code, 1, r.stderr)
          assert.include(r.stderr, `${fifo}: not a regular file`)
        }
      }),
    { timeout: 120_000 }
  )
})
