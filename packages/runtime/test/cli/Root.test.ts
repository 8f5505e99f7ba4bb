/**
 * Where every command finds its sessions root: a root that is a symbolic link or a regular file is
 * refused by every command the same way (exit 1, the same message) instead of a silent success;
 * an over-long name gets its own hint; an empty `--sessions-dir`, `--workspace` or session id is a
 * usage error rather than the current directory (or a session named ""), and so is an
 * `evidence --limit` outside 1–32768.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { logbook } from "./inProcess.ts"

/** Commands that read or write a sessions root, with the arguments they need. */
const commands: ReadonlyArray<ReadonlyArray<string>> = [
  ["sessions"],
  ["search", "foo"],
  ["search", "foo", "--in", "history"],
  ["facts"],
  ["retention", "run"],
  ["show", "x"],
  ["verify", "x"],
  ["events", "x"],
  ["turn", "x", "1"],
  ["explain", "x"],
  ["append", "x"],
  ["migrate"]
]

describe("the sessions root", () => {
  it.effect("a root that is a symbolic link or a regular file is refused by every command alike", () =>
    Effect.gen(function*() {
      const base = yield* tempDir("cli-root")
      const real = path.join(base, "real")
      fs.mkdirSync(real)
      const link = path.join(base, "link")
      fs.symlinkSync(real, link)
      const file = path.join(base, "file")
      fs.writeFileSync(file, "not a directory")
      for (const [root, expected] of [[link, "is a symbolic link"], [file, "is a regular file, not a directory"]]) {
        for (const args of commands) {
          const r = yield* logbook(["--sessions-dir", root ?? "", ...args])
          assert.strictEqual(r.exitCode, 1, `${args.join(" ")}: ${r.stdout}${r.stderr}`)
          assert.include(r.stderr, `${root}: the sessions root ${expected}`, args.join(" "))
          assert.strictEqual(r.stdout, "", args.join(" "))
        }
      }
      assert.deepStrictEqual(fs.readdirSync(real), [])
    }))

  it.effect("an empty session id and an evidence --limit outside 1-32768 are usage errors, never clamped", () =>
    Effect.gen(function*() {
      const base = yield* tempDir("cli-root")
      const at = (args: ReadonlyArray<string>) => logbook(["--sessions-dir", base, ...args])
      for (
        const args of [["show", ""], ["append", ""], ["verify", ""], ["facts", "--session", ""], [
          "demo",
          "--session",
          ""
        ]]
      ) {
        const r = yield* at(args)
        assert.strictEqual(r.exitCode, 2, `${args.join(" ")}: ${r.stderr}`)
        assert.include(r.stderr, "is empty", args.join(" "))
      }
      for (const limit of ["0", "-5", "99999"]) {
        const r = yield* at(["evidence", "s", "0", "ab", "--limit", limit])
        assert.strictEqual(r.exitCode, 2, r.stderr)
        assert.include(r.stderr, `--limit must be 1 to 32768, got ${limit}`)
      }
      assert.deepStrictEqual(fs.readdirSync(base), [])
    }))

  it.effect("a session id longer than a file name may be is named as such, not as a disk problem", () =>
    Effect.gen(function*() {
      const base = yield* tempDir("cli-root")
      for (const command of ["show", "append"]) {
        const r = yield* logbook(["--sessions-dir", base, command, "a".repeat(300)])
        assert.strictEqual(r.exitCode, 1, r.stderr)
        assert.include(r.stderr, "longer than the file system allows", command)
        assert.notInclude(r.stderr, "check the disk", command)
      }
    }))

  it.effect("an empty --sessions-dir or --workspace is a usage error, not the current directory", () =>
    Effect.gen(function*() {
      for (const flag of ["--sessions-dir", "--workspace"]) {
        const r = yield* logbook([flag, "", "sessions"])
        assert.strictEqual(r.exitCode, 2, r.stderr)
        assert.include(r.stderr, `${flag} is empty`)
      }
    }))
})
