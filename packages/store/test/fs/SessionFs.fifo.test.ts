/**
 * FIFOs planted where the store reads metadata (issue 33, item 10): `open(2)` of a FIFO blocks until
 * a peer opens the other end, and a blocked synchronous open ignores SIGINT and SIGTERM. Every read
 * and open of `SessionFs` must return a typed refusal instead, and `EventLog.open` over a session
 * whose `manifest.json`, `index/turns.json` or `index/pending-cap-rewrite.json` is a FIFO moves the
 * FIFO aside and rebuilds the metadata (item 12). The operations run in a child process (`fixtures/fifoProbe.ts`), which a hang would
 * stall for good; it is killed only as a failsafe, and the test then names the operation that hung.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type { SessionPaths } from "../../src/log/SessionPaths.ts"
import { appendAll, nodeLayer, openLog, pathsOf, testRoot, turn } from "../fixtures/eventlogHelpers.ts"
import { fixturePath } from "../fixtures/eventlogHelpers.ts"

const PROBE = fixturePath("fifoProbe.ts")
/** Only a failsafe: a probe that returns prints its last line within a second or two. */
const FAILSAFE_MS = 60_000

const LABELS = [
  "readFileNoFollow",
  "readRange",
  "stream",
  "forEachChunk",
  "openAppend",
  "probeLock",
  "tryLock",
  "EventLog.open"
] as const

/** Runs the probe to its end (or kills it after the failsafe) and returns its lines by label. */
const runProbe = (fifo: string, root: string, id: string) =>
  Effect.callback<{ readonly lines: Map<string, string>; readonly done: boolean; readonly stderr: string }>(
    (resume) => {
      const child = spawn(process.execPath, ["--conditions=@logbook/source", PROBE, fifo, root, id], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk))
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      const failsafe = setTimeout(() => child.kill("SIGKILL"), FAILSAFE_MS)
      child.on("close", () => {
        clearTimeout(failsafe)
        const lines = new Map<string, string>()
        for (const line of out.split("\n")) {
          const space = line.indexOf(" ")
          if (space > 0) lines.set(line.slice(0, space), line.slice(space + 1))
        }
        resume(Effect.succeed({ lines, done: out.split("\n").includes("done"), stderr }))
      })
      return Effect.sync(() => child.kill("SIGKILL"))
    }
  )

const plantFifo = (path: string) => {
  fs.rmSync(path, { force: true })
  execFileSync("mkfifo", ["-m", "600", path])
}

const places: ReadonlyArray<readonly [string, (p: SessionPaths) => string]> = [
  ["manifest.json", (p) => p.manifest],
  ["index/turns.json", (p) => p.turns],
  ["index/pending-cap-rewrite.json", (p) => p.marker]
]

describe("SessionFs and planted FIFOs", () => {
  for (const [where, at] of places) {
    it.effect(
      `a FIFO at ${where} is refused by every read and open, and EventLog.open returns`,
      () =>
        Effect.gen(function*() {
          const { root } = yield* testRoot
          const paths = pathsOf(root, "s")
          yield* Effect.scoped(Effect.gen(function*() {
            yield* appendAll(yield* openLog(root, "s"), turn("a"))
          }))
          const fifo = at(paths)
          plantFifo(fifo)
          const { done, lines, stderr } = yield* runProbe(fifo, root, "s")
          const hung = LABELS.find((label) => !lines.has(label))
          assert.isTrue(done, `the probe hung at ${hung ?? "the end"} (stderr: ${stderr})`)
          for (const label of ["readFileNoFollow", "readRange", "stream", "forEachChunk"]) {
            assert.match(lines.get(label) ?? "", /^StoreIoError E/, label)
          }
          assert.match(lines.get("openAppend") ?? "", /^StoreIoError E/)
          // The open makes way for the metadata it rebuilds: the FIFO is moved aside, never deleted.
          assert.strictEqual(lines.get("EventLog.open"), "ok")
          const aside = fs.readdirSync(path.dirname(fifo)).filter((name) =>
            name.startsWith(`${path.basename(fifo)}.displaced-`)
          )
          assert.strictEqual(aside.length, 1)
          assert.isTrue(fs.lstatSync(path.join(path.dirname(fifo), aside[0] ?? "")).isFIFO())
        }).pipe(Effect.provide(nodeLayer())),
      { timeout: FAILSAFE_MS + 30_000 }
    )
  }
})
