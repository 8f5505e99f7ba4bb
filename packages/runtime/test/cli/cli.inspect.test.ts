/**
 * End-to-end tests of the read side of the `logbook` binary: `demo` and what it tells the user
 * to run next, `sessions`, `show`, `turn`, `events` and `verify` — their text and `--json`
 * output, exit codes 0/3/5, the store location flags, and that inspection never writes. All run
 * in-process except where the binary itself is the subject: finding the store from the current
 * directory and from `LOGBOOK_SESSIONS_DIR` (two child processes).
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { RunResult } from "./harness.ts"
import { assertBuilt, jsonLines, plantSession, run, runHere, sessionsOf, workspace } from "./harness.ts"

/** One workspace holding a 4-turn demo session `demo`, shared by the tests that only read it. */
class DemoStore extends Context.Service<DemoStore, { readonly ws: string; readonly demo: RunResult }>()(
  "test/cli/DemoStore"
) {}

const DemoStoreLive = Layer.effect(
  DemoStore,
  Effect.gen(function*() {
    const ws = yield* workspace
    const demo = yield* runHere(["--workspace", ws, "demo", "--session", "demo", "--turns", "4"], { cwd: ws })
    return { ws, demo }
  })
)

/** Every file below `dir` with its bytes and mtime. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    const p = path.join(dir, name)
    const st = fs.lstatSync(p)
    out[name] = st.isDirectory() ? "dir" : `${st.mtimeMs} ${fs.readFileSync(p).toString("base64")}`
  }
  return out
}

layer(DemoStoreLive, { excludeTestServices: true, concurrent: true })("logbook inspection commands", (it) => {
  it.effect("demo records a realistic session and prints the follow-up commands, filled in", () =>
    Effect.gen(function*() {
      const { demo, ws } = yield* DemoStore
      assert.strictEqual(demo.code, 0, demo.stderr)
      for (
        const next of [
          "show demo",
          "turn demo 1",
          "turn demo 2",
          "events demo",
          "verify demo",
          "goal show demo",
          "progress show demo",
          "sessions"
        ]
      ) {
        assert.include(demo.stdout, `--workspace ${ws} ${next}`)
      }
      assert.include(demo.stdout, "4 turns (turn 2 failed)")
      const events = fs.readFileSync(path.join(sessionsOf(ws), "demo", "events.jsonl"), "utf8")
      for (const needle of ["\"goal\":", "command_execution", "aggregated_output", "unified_diff", "reasoning"]) {
        assert.include(events, needle)
      }
      const [goal, progress] = yield* Effect.all([
        runHere(["goal", "show", "demo", "--json"], { cwd: ws }),
        runHere(["progress", "show", "demo"], { cwd: ws })
      ], { concurrency: 2 })
      assert.strictEqual(JSON.parse(goal.stdout).status, "complete", goal.stderr)
      assert.include(progress.stdout, "**Completion:** 100%")
      const again = yield* runHere(["--workspace", ws, "demo", "--session", "demo"], { cwd: ws })
      assert.strictEqual(again.code, 1)
      assert.include(again.stderr, "session demo already exists")
    }))

  it.effect("show describes the session in text and as one JSON object", () =>
    Effect.gen(function*() {
      const { ws } = yield* DemoStore
      const [text, json] = yield* Effect.all([
        runHere(["show", "demo"], { cwd: ws }),
        runHere(["show", "demo", "--json"], { cwd: ws })
      ], { concurrency: 2 })
      assert.strictEqual(text.code, 0, text.stderr)
      for (
        const needle of [
          "Status        completed",
          "retained 1-4",
          "no open turn",
          "Turn index    4 entries",
          "Lock          free",
          "Size on disk",
          "Metadata      up to date"
        ]
      ) {
        assert.include(text.stdout, needle)
      }
      assert.strictEqual(json.code, 0, json.stderr)
      const shown = JSON.parse(json.stdout) as Record<string, unknown>
      assert.deepStrictEqual(Object.keys(shown), [
        "session_id",
        "dir",
        "manifest",
        "metadata",
        "retained_turns",
        "open_turn",
        "evicted_turns",
        "turn_index",
        "lock",
        "live",
        "pinned",
        "events_bytes",
        "size_on_disk"
      ])
      const manifest = shown.manifest as Record<string, unknown>
      assert.deepStrictEqual([manifest.turn_count, manifest.status, manifest.in_turn], [4, "completed", false])
      assert.deepStrictEqual(shown.retained_turns, { first: 1, last: 4 })
      assert.deepStrictEqual([shown.lock, shown.live, shown.pinned], ["free", false, false])
      const index = shown.turn_index as { entries: number; turns: Array<Record<string, unknown>> }
      assert.deepStrictEqual(index.turns.map((t) => t.turn_number), [1, 2, 3, 4])
      assert.strictEqual(index.entries, 4)
    }))

  it.effect("turn prints one turn's bare events and events prints the whole retained log", () =>
    Effect.gen(function*() {
      const { ws } = yield* DemoStore
      const [one, two, all, shown] = yield* Effect.all([
        runHere(["turn", "demo", "1"], { cwd: ws }),
        runHere(["turn", "demo", "2"], { cwd: ws }),
        runHere(["events", "demo"], { cwd: ws }),
        runHere(["show", "demo", "--json"], { cwd: ws })
      ], { concurrency: 2 })
      for (const r of [one, two, all]) assert.strictEqual(r.code, 0, r.stderr)
      const first = jsonLines(one.stdout)
      assert.strictEqual(first[0]?.type, "turn.started")
      assert.strictEqual(first.at(-1)?.type, "turn.completed")
      assert.isTrue(first.every((e) => !("schema_version" in e) && typeof e.type === "string"))
      assert.strictEqual(jsonLines(two.stdout).at(-1)?.type, "turn.failed")
      const events = jsonLines(all.stdout)
      const manifest = (JSON.parse(shown.stdout) as { manifest: { event_count: number } }).manifest
      assert.strictEqual(events.length, manifest.event_count)
      assert.deepStrictEqual([events[0]?.type, events.at(-1)?.type], ["thread.started", "thread.completed"])
      assert.strictEqual(all.stderr, "")
    }))

  it.effect("unknown sessions and turns exit 3 with a message saying what to do", () =>
    Effect.gen(function*() {
      const { ws } = yield* DemoStore
      const results = yield* Effect.all([
        runHere(["show", "ghost"], { cwd: ws }),
        runHere(["turn", "ghost", "1"], { cwd: ws }),
        runHere(["events", "ghost"], { cwd: ws }),
        runHere(["verify", "ghost"], { cwd: ws }),
        runHere(["turn", "demo", "99"], { cwd: ws })
      ], { concurrency: 2 })
      for (const r of results.slice(0, 4)) {
        assert.strictEqual(r.code, 3)
        assert.include(
          r.stderr,
          `session ghost not found in ${sessionsOf(ws)}; list sessions with \`logbook sessions\``
        )
        assert.strictEqual(r.stdout, "")
        assert.notInclude(r.stderr, "    at ")
      }
      const turn = results[4]
      assert.strictEqual(turn?.code, 3)
      assert.include(
        turn?.stderr ?? "",
        "turn 99 not found in session demo; `logbook show demo` lists the retained turns"
      )
      assert.isFalse(fs.existsSync(path.join(sessionsOf(ws), "ghost")))
    }))

  it.effect("verify exits 0 on a clean session, and 5 with offsets on a damaged copy without writing to it", () =>
    Effect.gen(function*() {
      const { ws: demoWs } = yield* DemoStore
      const clean = yield* runHere(["verify", "demo"], { cwd: demoWs })
      assert.strictEqual(clean.code, 0, clean.stderr)
      assert.include(clean.stdout, "Clean")
      const ws = yield* workspace
      const dir = path.join(sessionsOf(ws), "damaged")
      fs.cpSync(path.join(sessionsOf(demoWs), "demo"), dir, { recursive: true })
      // The copy is session `damaged` (a manifest naming another session is a finding of its own).
      const manifest = path.join(dir, "manifest.json")
      fs.writeFileSync(
        manifest,
        fs.readFileSync(manifest, "utf8").replace("\"session_id\":\"demo\"", "\"session_id\":\"damaged\"")
      )
      const events = path.join(dir, "events.jsonl")
      const garbageAt = fs.statSync(events).size
      fs.appendFileSync(events, "this is not json\n")
      const tornAt = fs.statSync(events).size
      fs.appendFileSync(events, "{\"schema_version\":\"0.18.0\",\"event\":{\"ty")
      const before = snapshot(dir)
      const [text, json] = yield* Effect.all([
        runHere(["verify", "damaged"], { cwd: ws }),
        runHere(["verify", "damaged", "--json"], { cwd: ws })
      ], { concurrency: 2 })
      assert.deepStrictEqual(snapshot(dir), before)
      assert.strictEqual(text.code, 5)
      assert.include(text.stdout, `torn-tail: events.jsonl ends with an unterminated line at byte ${tornAt}`)
      assert.include(text.stdout, `byte ${garbageAt}`)
      assert.include(text.stderr, "integrity problem(s) found")
      assert.include(text.stderr, "logbook append damaged < /dev/null")
      assert.strictEqual(json.code, 5)
      const report = JSON.parse(json.stdout) as {
        clean: boolean
        torn_tail: { offset: number }
        malformed_lines: { count: number; lines: Array<{ offset: number; reason: string }> }
        findings: Array<{ kind: string }>
      }
      assert.isFalse(report.clean)
      assert.strictEqual(report.torn_tail.offset, tornAt)
      assert.deepStrictEqual(report.malformed_lines.lines.map((l) => l.offset), [garbageAt])
      assert.deepStrictEqual(report.findings.map((f) => f.kind), ["torn-tail", "malformed-lines", "manifest-mismatch"])
      // A writer's open repairs the tail and rewrites the metadata; the malformed lines remain, skipped.
      const repair = yield* runHere(["append", "damaged"], { cwd: ws })
      assert.strictEqual(repair.code, 0, repair.stderr)
      const after = yield* runHere(["verify", "damaged", "--json"], { cwd: ws })
      const repaired = JSON.parse(after.stdout) as typeof report
      assert.strictEqual(repaired.torn_tail, null)
      assert.deepStrictEqual(repaired.findings.map((f) => f.kind), ["malformed-lines"])
      assert.deepStrictEqual(repaired.malformed_lines.lines.map((l) => l.offset), [garbageAt, tornAt])
    }))

  it.effect("a VT Code log with token counts beyond 2^53 shows its turns, verifies clean and prints their exact digits", () =>
    Effect.gen(function*() {
      const ws = yield* workspace
      const dir = path.join(sessionsOf(ws), "vt")
      fs.mkdirSync(dir, { recursive: true })
      const completedWith = (tokens: string) =>
        `{"schema_version":"0.18.0","event":{"type":"turn.completed","usage":{"input_tokens":${tokens},` +
        `"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":3}}}\n`
      const started = `{"schema_version":"0.18.0","event":{"type":"turn.started"}}\n`
      const log = started + completedWith("9007199254740993") + started + completedWith("18446744073709551615")
      fs.writeFileSync(path.join(dir, "events.jsonl"), log)
      const shown = yield* runHere(["show", "vt", "--json"], { cwd: ws })
      assert.strictEqual(shown.code, 0, shown.stderr)
      const index = (JSON.parse(shown.stdout) as { turn_index: { turns: Array<Record<string, unknown>> } }).turn_index
      assert.deepStrictEqual(index.turns.map((t) => [t.turn_number, t.event_count]), [[1, 2], [2, 2]])
      // A writer's open publishes the metadata; then the log verifies clean and is printed turn by turn.
      const opened = yield* runHere(["append", "vt"], { cwd: ws })
      assert.strictEqual(opened.code, 0, opened.stderr)
      const [verify, first, second] = yield* Effect.all([
        runHere(["verify", "vt"], { cwd: ws }),
        runHere(["turn", "vt", "1"], { cwd: ws }),
        runHere(["turn", "vt", "2"], { cwd: ws })
      ], { concurrency: 2 })
      assert.strictEqual(verify.code, 0, verify.stdout + verify.stderr)
      assert.strictEqual(first.code, 0, first.stderr)
      // Shown with the digits the file holds, not the nearest double of the parsed value.
      assert.strictEqual(
        first.stdout,
        "{\"type\":\"turn.started\"}\n" +
          "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":9007199254740993,\"cached_input_tokens\":0," +
          "\"cache_creation_tokens\":0,\"output_tokens\":3}}\n"
      )
      assert.include(second.stdout, `"input_tokens":18446744073709551615,`)
      const events = yield* runHere(["events", "vt", "--offsets"], { cwd: ws })
      assert.include(events.stdout, `"input_tokens":9007199254740993,`)
      assert.include(events.stdout, `"input_tokens":18446744073709551615,`)
      for (const line of events.stdout.trim().split("\n")) JSON.parse(line)
      assert.strictEqual(fs.readFileSync(path.join(dir, "events.jsonl"), "utf8"), log, "the bytes are untouched")
      // Appending a count Logbook cannot write exactly stops the input like an invalid line.
      const big = yield* runHere(["append", "vt"], {
        cwd: ws,
        input: `{"type":"turn.started"}\n{"type":"turn.completed","usage":{"input_tokens":9007199254740993}}\n`
      })
      assert.strictEqual(big.code, 1)
      assert.include(big.stderr, "line 2 of the input is not a ThreadEvent: input_tokens is 9007199254740992")
      assert.include(big.stderr, "lines 1-1 were appended and flushed (1 events)")
    }))

  it.effect("sessions lists the most recently updated first, in text and with the documented JSON shape", () =>
    Effect.gen(function*() {
      const ws = yield* workspace
      plantSession(ws, "old", { updated_at: "2026-01-01T00:00:00+00:00" })
      plantSession(ws, "new", { updated_at: "2026-06-01T12:00:00+02:00", status: "active", turn_count: 5 })
      plantSession(ws, "mid", { updated_at: "2026-03-01T00:00:00Z" })
      const [json, limited, text] = yield* Effect.all([
        runHere(["sessions", "--json"], { cwd: ws }),
        runHere(["sessions", "--json", "--limit", "2"], { cwd: ws }),
        runHere(["sessions"], { cwd: ws })
      ], { concurrency: 2 })
      assert.strictEqual(json.code, 0, json.stderr)
      const listed = JSON.parse(json.stdout) as Array<Record<string, unknown>>
      assert.deepStrictEqual(listed.map((s) => s.session_id), ["new", "mid", "old"])
      assert.deepStrictEqual(listed[0], {
        session_id: "new",
        status: "active",
        turn_count: 5,
        event_count: 3,
        updated_at: "2026-06-01T12:00:00+02:00",
        live: false
      })
      assert.deepStrictEqual((JSON.parse(limited.stdout) as Array<{ session_id: string }>).map((s) => s.session_id), [
        "new",
        "mid"
      ])
      const rows = text.stdout.trimEnd().split("\n")
      assert.match(rows[0] ?? "", /^SESSION\s+STATUS\s+TURNS\s+EVENTS\s+UPDATED\s+LOCK\s+PIN$/u)
      assert.deepStrictEqual(rows.slice(1).map((r) => r.split(/\s+/u)[0]), ["new", "mid", "old"])
    }))

  it.effect("a stored line nested 100 000 levels deep is a skipped line to events and turn, not a crash", () =>
    Effect.gen(function*() {
      const ws = yield* workspace
      const made = yield* runHere(["--workspace", ws, "demo", "--session", "deep", "--turns", "1"], { cwd: ws })
      assert.strictEqual(made.code, 0, made.stderr)
      const log = path.join(sessionsOf(ws), "deep", "events.jsonl")
      const lines = fs.readFileSync(log, "utf8").split("\n")
      const depth = 100_000
      const deep = `{"schema_version":"0.18.0","event":{"type":"vendor.deep","x":${"[".repeat(depth)}${
        "]".repeat(depth)
      }}}`
      lines.splice(2, 0, deep)
      fs.writeFileSync(log, lines.join("\n"))
      const [events, turn] = yield* Effect.all([
        runHere(["events", "deep"], { cwd: ws }),
        runHere(["turn", "deep", "1"], { cwd: ws })
      ], { concurrency: 2 })
      for (const r of [events, turn]) {
        assert.strictEqual(r.code, 0, r.stderr.slice(0, 2000))
        assert.include(r.stderr, "nested at most 1000 levels deep")
        assert.notInclude(r.stderr, "Maximum call stack")
      }
      assert.include(events.stdout, "\"type\":\"turn.completed\"")
    }))

  it.effect("sessions and show report a symlinked pin as a pin and a symlinked lock as a link, not a live process", () =>
    Effect.gen(function*() {
      const ws = yield* workspace
      plantSession(ws, "pinlink", { updated_at: "2026-06-01T00:00:00Z" })
      plantSession(ws, "locklink", { updated_at: "2026-05-01T00:00:00Z" })
      fs.writeFileSync(path.join(ws, "target"), "")
      fs.symlinkSync(path.join(ws, "target"), path.join(sessionsOf(ws), "pinlink", "retention-pin.json"))
      fs.symlinkSync(path.join(ws, "target"), path.join(sessionsOf(ws), "locklink", "session.lock"))
      const [list, pinShow, lockShow, lockJson] = yield* Effect.all([
        runHere(["sessions"], { cwd: ws }),
        runHere(["show", "pinlink"], { cwd: ws }),
        runHere(["show", "locklink"], { cwd: ws }),
        runHere(["show", "locklink", "--json"], { cwd: ws })
      ], { concurrency: 2 })
      const rows = new Map(
        list.stdout.trimEnd().split("\n").slice(1).map((r) => {
          const cells = r.split(/\s+/u)
          return [cells[0], cells.slice(-2)] as const
        })
      )
      assert.deepStrictEqual(rows.get("pinlink"), ["free", "link"])
      assert.deepStrictEqual(rows.get("locklink"), ["link", "-"])
      assert.include(pinShow.stdout, "Pinned        yes: retention-pin.json is a symbolic link")
      assert.include(lockShow.stdout, "Lock          link: session.lock is a symbolic link, not a lock")
      assert.strictEqual(JSON.parse(lockJson.stdout).lock, "link")
    }))

  it.effect("the store is found through --sessions-dir, LOGBOOK_SESSIONS_DIR or --workspace, and reading creates nothing", () =>
    Effect.gen(function*() {
      assertBuilt()
      const ws = yield* workspace
      const custom = path.join(ws, "elsewhere")
      const recorded = yield* run(["demo", "--session", "d", "--turns", "1", "--json"], {
        cwd: ws,
        env: { LOGBOOK_SESSIONS_DIR: custom }
      })
      assert.strictEqual(recorded.code, 0, recorded.stderr)
      const out = JSON.parse(recorded.stdout) as Record<string, unknown>
      assert.deepStrictEqual(Object.keys(out), [
        "session_id",
        "sessions_dir",
        "turn_count",
        "event_count",
        "status",
        "next"
      ])
      assert.deepStrictEqual([out.session_id, out.sessions_dir, out.turn_count], ["d", custom, 1])
      assert.isTrue(fs.existsSync(path.join(custom, "d", "events.jsonl")))
      const [byFlag, byDefault, inEmpty] = yield* Effect.all([
        runHere(["sessions", "--json", "--sessions-dir", custom], { cwd: ws }),
        run(["sessions", "--json"], { cwd: ws }),
        runHere(["--workspace", path.join(ws, "empty"), "show", "d"], { cwd: ws })
      ], { concurrency: 2 })
      assert.deepStrictEqual(JSON.parse(byFlag.stdout), [
        {
          session_id: "d",
          status: "completed",
          turn_count: 1,
          event_count: out.event_count,
          updated_at: expectUpdated(custom),
          live: false
        }
      ])
      assert.deepStrictEqual(JSON.parse(byDefault.stdout), [])
      assert.strictEqual(inEmpty.code, 3)
      assert.isFalse(fs.existsSync(path.join(ws, ".logbook")))
      assert.isFalse(fs.existsSync(path.join(ws, "empty")))
    }))
})

const expectUpdated = (root: string): unknown =>
  (JSON.parse(fs.readFileSync(path.join(root, "d", "manifest.json"), "utf8")) as { updated_at: string }).updated_at
