/**
 * `logbook migrate` in-process: the legacy fixtures of a workspace's `.vtcode` imported into its
 * store, a dry run that changes nothing, a re-run that skips everything, and `--remove-legacy`.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { logbook } from "../inProcess.ts"

const fixtures = new URL("../../../../../test/fixtures/vtcode-legacy/", import.meta.url)

const legacyWorkspace = Effect.gen(function*() {
  const workspace = yield* tempDir("migrate-cli")
  const vtcode = path.join(workspace, ".vtcode")
  fs.mkdirSync(path.join(vtcode, "history"), { recursive: true })
  fs.mkdirSync(path.join(vtcode, "logs"))
  fs.copyFileSync(
    new URL("vtcode-legacy-history-envelope.session-foo.memory.json", fixtures),
    path.join(vtcode, "history", "session-foo.memory.json")
  )
  fs.copyFileSync(
    new URL("vtcode-legacy-trajectory-20260101T000000Z.jsonl", fixtures),
    path.join(vtcode, "logs", "trajectory-20260101T000000Z.jsonl")
  )
  return { workspace, vtcode, sessions: path.join(workspace, ".logbook", "sessions") }
})

describe("logbook migrate", () => {
  it.effect("a dry run changes nothing; the import creates both sessions; a re-run skips them; --remove-legacy cleans up", () =>
    Effect.gen(function*() {
      const { sessions, vtcode, workspace } = yield* legacyWorkspace
      const at = (args: ReadonlyArray<string>) => logbook(["--workspace", workspace, "migrate", ...args])
      const dry = yield* at(["--dry-run"])
      assert.strictEqual(dry.exitCode, 0, dry.stderr)
      assert.include(dry.stdout, "Dry run (nothing changed): Would import 2 session(s)")
      assert.isFalse(fs.existsSync(sessions))

      const run = yield* at(["--json"])
      assert.strictEqual(run.exitCode, 0, run.stderr)
      const report = JSON.parse(run.stdout)
      assert.deepStrictEqual(report.created.map((c: { dir: string }) => c.dir), [
        "session-foo.memory",
        "traj-20260101T000000Z"
      ])
      assert.strictEqual(report.sessions_created, 2)

      const again = yield* at([])
      assert.strictEqual(again.exitCode, 0, again.stderr)
      assert.include(again.stdout, "Imported 0 session(s)")
      assert.include(
        again.stdout,
        "history/session-foo.memory.json: session directory session-foo.memory already exists"
      )

      const listed = yield* logbook(["--workspace", workspace, "sessions", "--json"])
      assert.include(listed.stdout, "traj-20260101T000000Z")

      const removed = yield* at(["--remove-legacy"])
      assert.strictEqual(removed.exitCode, 0, removed.stderr)
      assert.include(removed.stdout, "Removed the legacy history/ and logs/ folders")
      assert.deepStrictEqual(fs.readdirSync(vtcode), [])
    }))

  it.effect("--remove-legacy refuses (exit 1, naming what stays) when a legacy file was not imported", () =>
    Effect.gen(function*() {
      const { sessions, vtcode, workspace } = yield* legacyWorkspace
      fs.mkdirSync(path.join(sessions, "session-foo.memory"), { recursive: true })
      const legacy = path.join(vtcode, "history", "session-foo.memory.json")
      const bytes = fs.readFileSync(legacy)
      const r = yield* logbook(["--workspace", workspace, "migrate", "--remove-legacy"])
      assert.strictEqual(r.exitCode, 1, r.stdout + r.stderr)
      assert.include(r.stdout, "Skipped 1:")
      assert.notInclude(r.stdout, "Removed the legacy")
      assert.include(
        r.stderr,
        "removing them would lose 1 entry not imported: history/session-foo.memory.json"
      )
      assert.deepStrictEqual(fs.readFileSync(legacy), bytes)
      assert.isTrue(fs.existsSync(path.join(vtcode, "logs", "trajectory-20260101T000000Z.jsonl")))
      const json = yield* logbook(["--workspace", workspace, "migrate", "--remove-legacy", "--json"])
      assert.strictEqual(json.exitCode, 1)
      assert.deepStrictEqual(
        JSON.parse(json.stdout).legacy_kept.map((k: { source: string }) => k.source),
        ["history/session-foo.memory.json"]
      )
    }))
})
