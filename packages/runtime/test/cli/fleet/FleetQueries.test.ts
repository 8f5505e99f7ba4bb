/**
 * The fleet query commands over real sessions (Codex and Claude Code transcripts imported into a
 * local store, each with an audit pack) and replicated with `logbook replicate`:
 * `fleet sessions` and `fleet show` print what the local commands print plus the origin host,
 * `fleet pack verify` passes on an untampered session and fails (exit 5) once a line or a file
 * row is edited, `fleet restore` recreates every file byte for byte (0600 files, 0700
 * directories) and refuses to overwrite a session, and the connection string is never printed.
 */
import { assert, describe, it } from "@effect/vitest"
import { resetFleetDatabase, tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as Sql from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { logbook } from "../inProcess.ts"
import { runFleetCli, testDbUrl, withDb } from "./support/fleetCli.ts"

/** The origin host `logbook replicate` records: this machine's name. */
const origin = os.hostname()

const realdata = path.join(import.meta.dirname, "..", "..", "..", "..", "projections", "test", "fixtures", "realdata")

const run = runFleetCli
const dbUrl = testDbUrl

/** Every regular file below `dir` (relative paths), with its bytes. */
const snapshot = (dir: string, relative = ""): Map<string, Buffer> => {
  const out = new Map<string, Buffer>()
  for (const entry of fs.readdirSync(path.join(dir, relative), { withFileTypes: true })) {
    const child = relative === "" ? entry.name : `${relative}/${entry.name}`
    if (entry.isDirectory()) { for (const [p, b] of snapshot(dir, child)) out.set(p, b) }
    else if (entry.isFile()) out.set(child, fs.readFileSync(path.join(dir, child)))
  }
  return out
}

/** A local store with imported real sessions, each packed, and the same sessions in a fresh fleet. */
const setUp = Effect.gen(function*() {
  const base = yield* tempDir("fleet-queries")
  const store = path.join(base, "store")
  const url = yield* dbUrl
  const imported = yield* logbook([
    "--sessions-dir",
    store,
    "import",
    "codex",
    path.join(realdata, "codex-rollout")
  ])
  assert.strictEqual(imported.exitCode, 0, imported.stderr)
  const claude = yield* logbook(["--sessions-dir", store, "import", "claude", path.join(realdata, "claude-code")])
  assert.strictEqual(claude.exitCode, 0, claude.stderr)
  const sessions = fs.readdirSync(store).filter((name) => !name.startsWith(".")).sort()
  assert.isAtLeast(sessions.length, 4)
  for (const session of sessions) {
    const packed = yield* logbook(["--sessions-dir", store, "pack", "create", session])
    assert.strictEqual(packed.exitCode, 0, packed.stderr)
  }
  yield* withDb(resetFleetDatabase)
  const replicated = yield* run(["--sessions-dir", store, "replicate", "--to", url])
  assert.strictEqual(replicated.exitCode, 0, replicated.stderr)
  const fleet = (args: ReadonlyArray<string>) => run(["fleet", ...args, "--db", url])
  return { base, store, sessions, url, fleet }
})

const withoutKeys = (value: unknown, keys: ReadonlyArray<string>): unknown => {
  const copy = { ...(value as Record<string, unknown>) }
  for (const key of keys) delete copy[key]
  return copy
}

describe("fleet queries", () => {
  it.live("fleet sessions and fleet show print the local outputs plus the origin host", () =>
    Effect.gen(function*() {
      const { fleet, sessions, store, url } = yield* setUp
      const local = yield* logbook(["--sessions-dir", store, "sessions", "--json"])
      const remote = yield* fleet(["sessions", "--json"])
      assert.strictEqual(remote.exitCode, 0, remote.stderr)
      const remoteList = JSON.parse(remote.stdout) as Array<Record<string, unknown>>
      assert.deepStrictEqual(
        remoteList.map((s) => withoutKeys(s, ["origin_host"])),
        JSON.parse(local.stdout)
      )
      assert.isTrue(remoteList.every((s) => s["origin_host"] === origin))
      const table = yield* fleet(["sessions"])
      assert.include(table.stdout.split("\n")[0], "ORIGIN")
      assert.include(table.stdout, origin)
      for (const session of sessions) {
        const localShow = yield* logbook(["--sessions-dir", store, "show", session, "--json"])
        const remoteShow = yield* fleet(["show", session, "--json"])
        assert.strictEqual(remoteShow.exitCode, 0, remoteShow.stderr)
        const remoteJson = JSON.parse(remoteShow.stdout) as Record<string, unknown>
        assert.strictEqual(remoteJson["origin_host"], origin)
        assert.strictEqual(remoteJson["dir"], null)
        assert.deepStrictEqual(
          withoutKeys(remoteJson, ["origin_host", "fleet", "dir"]),
          withoutKeys(JSON.parse(localShow.stdout), ["dir"])
        )
        const localText = (yield* logbook(["--sessions-dir", store, "show", session])).stdout.split("\n")
        const remoteText = (yield* fleet(["show", session])).stdout.split("\n")
        const keep = (lines: Array<string>) =>
          lines.filter((l) => !l.startsWith("Directory") && !l.startsWith("Origin"))
        assert.deepStrictEqual(keep(remoteText), keep(localText))
        assert.isTrue(remoteText.some((l) => l.startsWith("Origin") && l.includes(origin)))
      }
      for (const run of [remote, table]) assert.notInclude(run.stdout + run.stderr, url)
    }), 240_000)

  it.live(
    "fleet pack verify passes on what was replicated and fails after a line or a file is tampered",
    () =>
      Effect.gen(function*() {
        const { fleet, sessions, store, url } = yield* setUp
        const session = sessions[0] ?? ""
        const local = yield* logbook(["--sessions-dir", store, "pack", "verify", session, "--json"])
        const ok = yield* fleet(["pack", "verify", session, "--json"])
        assert.strictEqual(ok.exitCode, 0, ok.stdout + ok.stderr)
        assert.deepStrictEqual(
          withoutKeys(JSON.parse(ok.stdout), ["pack_path", "origin_host"]),
          withoutKeys(JSON.parse(local.stdout), ["pack_path"])
        )
        const text = yield* fleet(["pack", "verify", session])
        assert.include(text.stdout, "Verified: every listed file matches")
        const keys = yield* logbook(["pack", "keygen", path.join(store, "..", "keys")])
        assert.strictEqual(keys.exitCode, 0, keys.stderr)
        const publicKey = path.join(store, "..", "keys", "audit-pack-signing.pub")
        const unsigned = yield* fleet(["pack", "verify", session, "--public-key", publicKey])
        assert.strictEqual(unsigned.exitCode, 5, unsigned.stderr)
        assert.include(unsigned.stdout, "UNSIGNED")

        yield* withDb(Effect.gen(function*() {
          const sql = yield* Sql.SqlClient
          yield* sql`update events set line = convert_to('{"tampered":true}', 'UTF8')
          where session_id = ${session} and byte_offset = 0`
        }))
        const tampered = yield* fleet(["pack", "verify", session])
        assert.strictEqual(tampered.exitCode, 5, tampered.stdout + tampered.stderr)
        assert.include(tampered.stdout, "NOT verified")
        assert.include(tampered.stdout, "mismatch  events.jsonl")

        const other = sessions[1] ?? ""
        yield* withDb(Effect.gen(function*() {
          const sql = yield* Sql.SqlClient
          yield* sql`update files set content = convert_to('{}', 'UTF8')
          where session_id = ${other} and path = 'manifest.json'`
        }))
        const tamperedFile = yield* fleet(["pack", "verify", other, "--json"])
        assert.strictEqual(tamperedFile.exitCode, 5)
        const report = JSON.parse(tamperedFile.stdout) as { mismatches: Array<string> }
        assert.deepStrictEqual(report.mismatches, ["manifest.json"])
        assert.notInclude(tampered.stdout + tampered.stderr + tamperedFile.stderr, url)

        const restoreTampered = yield* fleet(["restore", session, "--sessions-dir", path.join(store, "..", "r")])
        assert.strictEqual(restoreTampered.exitCode, 5, restoreTampered.stderr)
        assert.include(restoreTampered.stderr, "the line at offset 0")
        const left = fs.existsSync(path.join(store, "..", "r")) ? fs.readdirSync(path.join(store, "..", "r")) : []
        assert.deepStrictEqual(left, [])

        const missing = yield* fleet(["pack", "verify", "no-such-session"])
        assert.strictEqual(missing.exitCode, 3)
      }),
    240_000
  )

  it.live(
    "fleet pack verify --pack checks an auditor's own copy with the report and exit codes of pack verify --pack",
    () =>
      Effect.gen(function*() {
        const { base, fleet, sessions, store } = yield* setUp
        const session = sessions[0] ?? ""
        const copy = path.join(base, "auditor.pack.json")
        fs.copyFileSync(path.join(store, session, "derived", "audit-pack.json"), copy)
        // The fleet's own replicated pack is gone: only the auditor's copy can be checked.
        yield* withDb(Effect.gen(function*() {
          const sql = yield* Sql.SqlClient
          yield* sql`delete from files where session_id = ${session} and path = 'derived/audit-pack.json'`
        }))
        assert.strictEqual((yield* fleet(["pack", "verify", session])).exitCode, 1)
        const both = (file: string) =>
          Effect.gen(function*() {
            const local = yield* logbook(["--sessions-dir", store, "pack", "verify", session, "--pack", file, "--json"])
            const remote = yield* fleet(["pack", "verify", session, "--pack", file, "--json"])
            assert.strictEqual(remote.exitCode, local.exitCode, remote.stdout + remote.stderr)
            if (local.stdout !== "") {
              assert.deepStrictEqual(
                withoutKeys(JSON.parse(remote.stdout), ["origin_host"]),
                JSON.parse(local.stdout)
              )
            }
            return { local, remote }
          })
        const ok = yield* both(copy)
        assert.strictEqual(ok.remote.exitCode, 0)
        assert.strictEqual(JSON.parse(ok.remote.stdout).pack_path, copy)
        const text = yield* fleet(["pack", "verify", session, "--pack", copy])
        assert.include(text.stdout, `Audit pack ${copy} of session ${session}`)
        assert.include(text.stdout, "Verified: every listed file matches")

        const pack = JSON.parse(fs.readFileSync(copy, "utf8")) as { entries: Array<{ sha256: string }> }
        const first = pack.entries[0]
        if (first !== undefined) first.sha256 = "0".repeat(64)
        const edited = path.join(base, "edited.pack.json")
        fs.writeFileSync(edited, JSON.stringify(pack))
        assert.strictEqual((yield* both(edited)).remote.exitCode, 5)

        const garbage = path.join(base, "garbage.pack.json")
        fs.writeFileSync(garbage, "{not a pack")
        assert.strictEqual((yield* both(garbage)).remote.exitCode, 4)
        assert.strictEqual((yield* both(path.join(base, "absent.pack.json"))).remote.exitCode, 1)
      }),
    240_000
  )

  it.live(
    "fleet restore recreates every file byte for byte, private, and never overwrites a session",
    () =>
      Effect.gen(function*() {
        const { base, fleet, sessions, store } = yield* setUp
        const target = path.join(base, "restored")
        for (const session of sessions) {
          const restored = yield* run(["--sessions-dir", target, "fleet", "restore", session, "--db", yield* dbUrl])
          assert.strictEqual(restored.exitCode, 0, restored.stderr)
          const original = snapshot(path.join(store, session))
          const copy = snapshot(path.join(target, session))
          assert.deepStrictEqual([...copy.keys()].sort(), [...original.keys()].sort())
          for (const [file, bytes] of original) {
            assert.isTrue(copy.get(file)?.equals(bytes), `${session}/${file} differs`)
            assert.strictEqual(fs.statSync(path.join(target, session, file)).mode & 0o777, 0o600)
          }
          assert.strictEqual(fs.statSync(path.join(target, session)).mode & 0o777, 0o700)
        }
        assert.deepStrictEqual(fs.readdirSync(target).sort(), [...sessions].sort())
        const session = sessions[0] ?? ""
        const again = yield* fleet(["restore", session, "--sessions-dir", target])
        assert.strictEqual(again.exitCode, 1)
        assert.include(again.stderr, "already exists")
        const verified = yield* logbook(["--sessions-dir", target, "pack", "verify", session])
        assert.strictEqual(verified.exitCode, 0, verified.stdout)
        const unknown = yield* fleet(["restore", "no-such-session", "--sessions-dir", target])
        assert.strictEqual(unknown.exitCode, 3)
      }),
    240_000
  )

  it.live(
    "without --db or LOGBOOK_DATABASE_URL a fleet command is a usage error; a password is never printed",
    () =>
      Effect.gen(function*() {
        const none = yield* logbook(["fleet", "sessions"])
        assert.strictEqual(none.exitCode, 2)
        assert.include(none.stderr, "LOGBOOK_DATABASE_URL")
        const secret = "postgres://logbook:s3cret-pw@127.0.0.1:1/fleet"
        const refused = yield* logbook(["fleet", "sessions"], { env: { LOGBOOK_DATABASE_URL: secret } })
        assert.strictEqual(refused.exitCode, 1)
        assert.notInclude(refused.stdout + refused.stderr, "s3cret-pw")
        assert.include(refused.stderr, "127.0.0.1:1/fleet")
      }),
    60_000
  )
})
