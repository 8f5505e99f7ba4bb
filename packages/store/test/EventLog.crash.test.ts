/**
 * The short crash loop (DESIGN §9): a child process appends seeded turns to one session and is
 * SIGKILLed at seeded random instants — while opening (recovering from the previous kill) or
 * while appending — for at least 50 iterations. After every kill a copy of the session is
 * reopened and checked: every event acknowledged by a completed barrier is present exactly once
 * and in order, nothing appears that was never appended, the index and manifest agree with an
 * independent rescan, and each kill adds at most one torn line. The next child continues on the
 * damaged original, so recovery itself is killed too.
 *
 * `LOGBOOK_CRASH_ITERATIONS` and `LOGBOOK_CRASH_SEED` select a longer or different run.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { copyDir, diskTestRoot, fixturePath, nodeLayer, openLog, pathsOf, prng } from "./fixtures/eventlogHelpers.ts"
import { assertDiskConsistent, messageTexts } from "./fixtures/eventlogOracle.ts"

const ITERATIONS = Number(process.env["LOGBOOK_CRASH_ITERATIONS"] ?? 50)
const SEED = Number(process.env["LOGBOOK_CRASH_SEED"] ?? 20261003)
const SEQ_STRIDE = 1_000_000

interface ChildRun {
  readonly acks: ReadonlyArray<number>
  readonly reachedReady: boolean
  readonly failure: string | undefined
}

/**
 * Runs one child writer and SIGKILLs it: `killAt` = "opening" kills `delayMs` after the child
 * announced it is opening the log; otherwise after `acks` acknowledgements plus `delayMs`.
 * Resolves once the child is dead and its stdout fully read.
 */
const runChild = (
  args: ReadonlyArray<string>,
  plan: { readonly killAt: "opening" | "acks"; readonly acks: number; readonly delayMs: number },
  cacheDir: string
) =>
  Effect.callback<ChildRun, Error>((resume) => {
    const child = spawn(process.execPath, ["--conditions=@logbook/source", fixturePath("crashWriter.ts"), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_COMPILE_CACHE: cacheDir }
    })
    const acks: Array<number> = []
    let reachedReady = false
    let failure: string | undefined
    let armed = false
    let pending = ""
    let stderr = ""
    const killLater = () => {
      if (armed) return
      armed = true
      setTimeout(() => child.kill("SIGKILL"), plan.delayMs)
    }
    child.stdout.on("data", (data: Buffer) => {
      pending += data.toString()
      let nl = pending.indexOf("\n")
      while (nl !== -1) {
        const line = pending.slice(0, nl)
        pending = pending.slice(nl + 1)
        nl = pending.indexOf("\n")
        if (line === "opening" && plan.killAt === "opening") killLater()
        else if (line === "ready") {
          reachedReady = true
          if (plan.killAt === "acks" && plan.acks === 0) killLater()
        } else if (line.startsWith("ack ")) {
          acks.push(Number(line.slice(4)))
          if (plan.killAt === "acks" && acks.length >= plan.acks) killLater()
        } else if (line.startsWith("failed") || line === "done") {
          failure = line
          child.kill("SIGKILL")
        }
      }
    })
    child.stderr.on("data", (data: Buffer) => {
      stderr += data.toString()
    })
    child.on("error", (error) => resume(Effect.fail(error)))
    child.on("close", (code, signal) => {
      if (signal !== "SIGKILL") {
        resume(Effect.fail(new Error(`child exited on its own (${code}): ${failure ?? ""} ${stderr}`)))
      } else {
        resume(Effect.succeed({ acks, reachedReady, failure: failure ?? (stderr.length > 0 ? stderr : undefined) }))
      }
    })
    // Interrupted (the other lane failed, or a timeout): never leave the writer running.
    return Effect.sync(() => {
      child.kill("SIGKILL")
    })
  })

const seqOf = (text: string): number => Number(/^seq:(\d+)/.exec(text)?.[1] ?? Number.NaN)

/** One lane: a session of its own, killed `iterations` times; returns what was acknowledged. */
const lane = (root: string, base: string, id: string, seed: number, iterations: number, cacheDir: string) =>
  Effect.gen(function*() {
    const rng = prng(seed)
    const acked: Array<number> = []
    let malformedBefore = 0
    let killedWhileAppending = 0
    for (let iteration = 0; iteration < iterations; iteration++) {
      const label = `lane ${id}, seed ${seed}, iteration ${iteration}`
      const killAt = rng.next() < 0.2 ? "opening" as const : "acks" as const
      const plan = { killAt, acks: rng.int(0, 8), delayMs: rng.int(0, 6) }
      const run = yield* runChild(
        [root, id, String(rng.int(1, 2 ** 31)), String((iteration + 1) * SEQ_STRIDE)],
        plan,
        cacheDir
      )
      assert.isUndefined(run.failure, `${label}: the child reported ${run.failure}`)
      for (let i = 1; i < run.acks.length; i++) {
        assert.isAtLeast(run.acks[i] ?? 0, run.acks[i - 1] ?? 0, `${label}: acks never go back`)
      }
      acked.push(...run.acks)
      if (run.acks.length > 0) killedWhileAppending++

      // Check a copy, so the next child recovers from exactly what this kill left behind.
      const original = pathsOf(root, id)
      if (!fs.existsSync(original.dir)) continue
      const checkRoot = path.join(base, `check-${id}-${iteration}`)
      const checkPaths = pathsOf(checkRoot, id)
      copyDir(original.dir, checkPaths.dir)
      yield* Effect.scoped(openLog(checkRoot, id))
      const state = assertDiskConsistent(checkPaths, label)
      const seqs = messageTexts(state).map(seqOf)
      for (let i = 1; i < seqs.length; i++) {
        assert.isAbove(seqs[i] ?? 0, seqs[i - 1] ?? 0, `${label}: events in order, none duplicated`)
      }
      const present = new Set(seqs)
      assert.deepStrictEqual(acked.filter((s) => !present.has(s)), [], `${label}: acknowledged events lost`)
      for (const s of seqs) {
        assert.isTrue(Number.isInteger(s) && s >= SEQ_STRIDE, `${label}: phantom event ${s}`)
      }
      assert.isAtMost(state.malformed, malformedBefore + 1, `${label}: at most one torn line per kill`)
      malformedBefore = state.malformed
      const turnStarts = state.lines.filter((l) => l.event?.type === "turn.started").length
      assert.strictEqual(state.entries.length, turnStarts, `${label}: one index entry per turn.started`)
      fs.rmSync(checkRoot, { recursive: true, force: true })
    }
    return { acked, killedWhileAppending }
  })

describe("EventLog crash loop", () => {
  it.live(
    `writers SIGKILLed at ${ITERATIONS} seeded instants lose no acknowledged event and leave consistent logs`,
    () =>
      Effect.gen(function*() {
        const { root, base } = yield* diskTestRoot
        // A compile cache shared across runs roughly halves the start-up time of each child.
        const cacheDir = path.join(os.tmpdir(), "logbook-node-compile-cache")
        // Two lanes (two sessions) run side by side so the two cores overlap child start-up.
        const lanes = ["crash-a", "crash-b"] as const
        const perLane = Math.ceil(ITERATIONS / lanes.length)
        const results = yield* Effect.all(
          lanes.map((id, i) => lane(root, base, id, SEED + i, perLane, cacheDir)),
          { concurrency: lanes.length }
        )
        for (const [i, id] of lanes.entries()) {
          const result = results[i] ?? { acked: [], killedWhileAppending: 0 }
          assert.isAtLeast(result.killedWhileAppending, perLane / 2, `${id}: most kills landed while appending`)
          assert.isAtLeast(result.acked.length, perLane, `${id}: the children made progress`)
          // Finally the original itself, after all those kills, opens consistent and accepts appends.
          const paths = pathsOf(root, id)
          yield* Effect.scoped(Effect.gen(function*() {
            const log = yield* openLog(root, id)
            yield* log.append({ type: "turn.started" })
            yield* log.append({
              type: "item.completed",
              item: { id: "m", type: "agent_message", text: "seq:999999999" }
            })
            yield* log.flush
          }))
          const final = assertDiskConsistent(paths, `${id}, final`)
          const finalSeqs = new Set(messageTexts(final).map(seqOf))
          assert.deepStrictEqual(result.acked.filter((s) => !finalSeqs.has(s)), [], `${id}: acknowledged events lost`)
          assert.isTrue(finalSeqs.has(999_999_999))
        }
      }).pipe(Effect.provide(nodeLayer())),
    { timeout: 180_000 }
  )
})
