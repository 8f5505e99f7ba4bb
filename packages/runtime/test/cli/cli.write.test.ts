/**
 * End-to-end tests of the write side of the `logbook` binary: `append` (bare and enveloped
 * input, the invalid-line contract, the event cap and exit 4 for evicted turns), `events
 * --follow` seeing a later append, and the retention commands with and without `--dry-run`.
 */
import { assert, layer } from "@effect/vitest"
import { formatRfc3339 } from "@logbook/domain"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  assertBuilt,
  bareTurns,
  eventually,
  jsonLines,
  plantSession,
  run,
  runHere,
  runInBackground,
  sessionsOf,
  usage,
  workspace
} from "./harness.ts"

const line = (value: unknown): string => JSON.stringify(value) + "\n"
const msg = (text: string) => ({ type: "item.completed", item: { id: text, type: "agent_message", text } })

const isoDaysAgo = (days: number): string => formatRfc3339(Date.now() - days * 86_400_000, "Z")

layer(Layer.effectDiscard(Effect.sync(assertBuilt)), { excludeTestServices: true, concurrent: true })(
  "logbook write commands",
  (it) => {
    it.effect("append takes bare and enveloped lines, skips blank ones and reports what it appended", () =>
      Effect.gen(function*() {
        const ws = yield* workspace
        const input = bareTurns(2) + "\n" +
          line({ schema_version: "0.17.0", event: { type: "turn.started" } }) +
          line({ schema_version: "0.18.0", event: msg("enveloped") })
        const json = yield* run(["append", "s", "--json"], { cwd: ws, input })
        assert.strictEqual(json.code, 0, json.stderr)
        assert.deepStrictEqual(JSON.parse(json.stdout), {
          session_id: "s",
          appended: 8,
          turn_count: 2,
          event_count: 8,
          status: "active",
          in_turn: true
        })
        const text = yield* runHere(["append", "s"], { cwd: ws, input: line({ type: "turn.completed", usage }) })
        assert.strictEqual(text.code, 0, text.stderr)
        assert.include(text.stdout, "Appended 1 event to s: 3 closed turns, 9 events, status active.")
        const events = jsonLines((yield* runHere(["events", "s"], { cwd: ws })).stdout)
        assert.deepStrictEqual(events.slice(-3), [{ type: "turn.started" }, msg("enveloped"), {
          type: "turn.completed",
          usage
        }])
      }))

    it.effect("an invalid line stops append with exit 1: earlier lines are appended and flushed, later ones never", () =>
      Effect.gen(function*() {
        const ws = yield* workspace
        const input = line({ type: "turn.started" }) + line(msg("kept")) + line({ type: "turn.completed" }) +
          line(msg("never")) + line({ type: "turn.completed", usage })
        const [bad, notJson, noFlush] = yield* Effect.all([
          runHere(["append", "s"], { cwd: ws, input }),
          runHere(["append", "t"], { cwd: ws, input: line({ type: "turn.started" }) + "{oops\n" }),
          runHere(["append", "u", "--no-flush"], { cwd: ws, input: "\n" + line(msg("a")) + "[1]\n" + line(msg("b")) })
        ], { concurrency: 3 })
        assert.strictEqual(bad.code, 1)
        assert.include(bad.stderr, "line 3 of the input is not a ThreadEvent")
        assert.include(bad.stderr, "usage")
        assert.include(bad.stderr, "lines 1-2 were appended and flushed (2 events), nothing after line 3 was read")
        assert.notInclude(bad.stderr, "    at ")
        assert.strictEqual(notJson.code, 1)
        assert.include(notJson.stderr, "line 2 of the input is not a ThreadEvent: not JSON")
        assert.strictEqual(noFlush.code, 1)
        assert.include(noFlush.stderr, "line 3 of the input is not a ThreadEvent: expected a JSON object")
        const [events, verify, uEvents] = yield* Effect.all([
          runHere(["events", "s"], { cwd: ws }),
          runHere(["verify", "s"], { cwd: ws }),
          runHere(["events", "u"], { cwd: ws })
        ], { concurrency: 3 })
        assert.deepStrictEqual(jsonLines(events.stdout), [{ type: "turn.started" }, msg("kept")])
        assert.strictEqual(verify.code, 0, verify.stdout)
        assert.deepStrictEqual(jsonLines(uEvents.stdout), [msg("a")])
      }))

    it.effect("append --max-events evicts whole turns; turn exits 4 for an evicted turn and 3 past the end", () =>
      Effect.gen(function*() {
        const ws = yield* workspace
        const appended = yield* runHere(["append", "capped", "--max-events", "7"], { cwd: ws, input: bareTurns(6) })
        assert.strictEqual(appended.code, 0, appended.stderr)
        const [shown, evicted, kept, beyond] = yield* Effect.all([
          runHere(["show", "capped", "--json"], { cwd: ws }),
          runHere(["turn", "capped", "1"], { cwd: ws }),
          runHere(["turn", "capped", "6"], { cwd: ws }),
          runHere(["turn", "capped", "7"], { cwd: ws })
        ], { concurrency: 2 })
        const state = JSON.parse(shown.stdout) as {
          retained_turns: { first: number; last: number }
          evicted_turns: number
        }
        assert.strictEqual(state.retained_turns.last, 6)
        assert.isAbove(state.evicted_turns, 0)
        assert.strictEqual(evicted.code, 4)
        assert.include(evicted.stderr, "turn 1 of session capped was evicted by the event cap")
        assert.include(evicted.stderr, "`logbook show capped` lists the retained turns")
        assert.strictEqual(kept.code, 0, kept.stderr)
        assert.deepStrictEqual(jsonLines(kept.stdout)[1], {
          type: "item.completed",
          item: { id: "t6", type: "agent_message", text: "t 6" }
        })
        assert.strictEqual(beyond.code, 3)
      }))

    it.effect("events --follow prints events appended later and never reports a line still being written", () =>
      Effect.gen(function*() {
        const ws = yield* workspace
        const first = yield* runHere(["append", "live"], { cwd: ws, input: bareTurns(1) })
        assert.strictEqual(first.code, 0, first.stderr)
        const follower = yield* runInBackground(["events", "live", "--follow"], { cwd: ws })
        const located = yield* runInBackground(["events", "live", "--follow", "--offsets"], { cwd: ws })
        yield* eventually("the existing events", () => jsonLines(follower.stdout()).length === 3)
        const later = yield* runHere(["append", "live"], {
          cwd: ws,
          input: line({ type: "turn.started" }) + line(msg("later"))
        })
        assert.strictEqual(later.code, 0, later.stderr)
        yield* eventually("the appended events", () => follower.stdout().includes("\"later\""))
        const events = path.join(sessionsOf(ws), "live", "events.jsonl")
        fs.appendFileSync(events, "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"turn.com")
        yield* Effect.sleep("600 millis")
        fs.appendFileSync(events, "pleted\",\"usage\":" + JSON.stringify(usage) + "}}\n")
        yield* eventually("the completed line", () => jsonLines(follower.stdout()).length === 6)
        yield* eventually("the completed line with its offset", () => jsonLines(located.stdout()).length === 6)
        const stopped = yield* follower.stop("SIGINT")
        assert.strictEqual(stopped.code, 130)
        assert.strictEqual(stopped.stderr, "")
        assert.deepStrictEqual(jsonLines(stopped.stdout).slice(3), [
          { type: "turn.started" },
          msg("later"),
          { type: "turn.completed", usage }
        ])
        // --offsets wraps the same events with the byte offset of each line of events.jsonl.
        const withOffsets = jsonLines((yield* located.stop("SIGINT")).stdout)
        const bytes = fs.readFileSync(events)
        const starts = [
          0,
          ...[...bytes.keys()].filter((i) => bytes[i] === 10 && i + 1 < bytes.length).map((i) => i + 1)
        ]
        assert.deepStrictEqual(withOffsets.map((r) => r.offset), starts)
        assert.deepStrictEqual(withOffsets.map((r) => r.event), jsonLines(stopped.stdout))
      }))

    it.effect("retention run --dry-run changes nothing; run, sweep, pin and unpin print what they changed", () =>
      Effect.gen(function*() {
        const ws = yield* workspace
        const root = sessionsOf(ws)
        plantSession(ws, "empty", { turn_count: 0, updated_at: isoDaysAgo(1) })
        plantSession(ws, "expired", { updated_at: isoDaysAgo(90) })
        plantSession(ws, "recent", { updated_at: isoDaysAgo(1) })
        plantSession(ws, "abandoned", { status: "active", updated_at: isoDaysAgo(60) })
        plantSession(ws, "keep", { updated_at: isoDaysAgo(90) })
        plantSession(ws, "stale", { status: "active", updated_at: isoDaysAgo(10) })
        const pinned = yield* runHere(["retention", "pin", "keep", "--reason", "post-mortem"], { cwd: ws })
        assert.strictEqual(pinned.code, 0, pinned.stderr)
        assert.include(pinned.stdout, "Pinned keep")
        const dry = yield* runHere(["retention", "run", "--dry-run", "--json"], { cwd: ws })
        assert.strictEqual(dry.code, 0, dry.stderr)
        const planned = JSON.parse(dry.stdout) as { marked: Array<string>; removed: Array<Record<string, string>> }
        assert.deepStrictEqual(planned.marked, ["abandoned"])
        assert.deepStrictEqual(planned.removed, [
          { session_id: "empty", phase: "zero-turn" },
          { session_id: "expired", phase: "expired" },
          { session_id: "abandoned", phase: "expired" }
        ])
        assert.deepStrictEqual(fs.readdirSync(root).sort(), [
          "abandoned",
          "empty",
          "expired",
          "keep",
          "recent",
          "stale"
        ])
        const applied = yield* runHere(["retention", "run", "--json"], { cwd: ws })
        assert.strictEqual(applied.code, 0, applied.stderr)
        const done = JSON.parse(applied.stdout) as typeof planned & { dry_run: boolean }
        assert.isFalse(done.dry_run)
        assert.deepStrictEqual([done.marked, done.removed], [planned.marked, planned.removed])
        const sessions = () => fs.readdirSync(root).filter((name) => !name.startsWith(".")).sort()
        assert.deepStrictEqual(sessions(), ["keep", "recent", "stale"])
        const [sweep, unpin, unpinAgain, unpinGhost, text] = yield* Effect.all([
          runHere(["retention", "sweep", "--max-age-days", "7", "--json"], { cwd: ws }),
          runHere(["retention", "unpin", "keep"], { cwd: ws }),
          runHere(["retention", "unpin", "recent"], { cwd: ws }),
          runHere(["retention", "unpin", "ghost"], { cwd: ws }),
          runHere(["retention", "run", "--dry-run", "--max-sessions", "0", "--preserve", "recent"], { cwd: ws })
        ], { concurrency: 2 })
        assert.deepStrictEqual(JSON.parse(sweep.stdout), { sessions_dir: root, max_age_days: 7, marked: ["stale"] })
        const manifest = JSON.parse(fs.readFileSync(path.join(root, "stale", "manifest.json"), "utf8")) as {
          status: string
        }
        assert.strictEqual(manifest.status, "completed")
        assert.include(unpin.stdout, "Unpinned keep")
        assert.include(unpinAgain.stdout, "recent was not pinned; nothing changed.")
        assert.strictEqual(unpinGhost.code, 3)
        assert.strictEqual(text.code, 0, text.stderr)
        assert.include(text.stdout, "Dry run (nothing changed)")
      }))
  }
)
