/**
 * Usage of the `logbook` CLI: every command's `--help` (rendered in process, fast), and — through
 * the built binary — usage errors exiting 2 with a short message on stderr, `--help` and
 * `--version` exiting 0.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Command } from "effect/cli"
import { TestConsole } from "effect/testing"
import { logbookCli } from "../../src/Cli.ts"
import { CLI_VERSION } from "../../src/cli/Root.ts"
import { storeLayerNode } from "../../src/SessionMemory.ts"
import { assertBuilt, run, workspace } from "./harness.ts"

/** Every command path, with words its help must contain. */
const COMMANDS: ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly needles: ReadonlyArray<string> }> = [
  {
    path: [],
    needles: [
      "Exit codes: 0 ok, 1 failure, 2 usage, 3 not found, 4 evicted turn or invalid audit pack, 5 integrity",
      "--sessions-dir"
    ]
  },
  { path: ["demo"], needles: ["--turns", "--session", "failed turn"] },
  { path: ["append"], needles: ["--max-events", "--no-flush", "invalid line"] },
  { path: ["sessions"], needles: ["--limit", "--json", "most recently updated first"] },
  { path: ["show"], needles: ["<session>", "size on disk"] },
  { path: ["turn"], needles: ["<n>", "Exit 3", "4 when", "--raw"] },
  { path: ["events"], needles: ["--follow", "Ctrl-C", "--offsets", "byte offset", "--raw", "redacted"] },
  { path: ["verify"], needles: ["Exit 5", "without writing"] },
  { path: ["retention"], needles: ["run", "sweep", "pin", "unpin"] },
  { path: ["retention", "run"], needles: ["--max-sessions", "--max-age-days", "--preserve", "--dry-run"] },
  { path: ["retention", "sweep"], needles: ["--max-age-days", "abandoned"] },
  { path: ["retention", "pin"], needles: ["--reason", "<session>"] },
  { path: ["retention", "unpin"], needles: ["<session>"] },
  { path: ["pack"], needles: ["create", "verify", "keygen"] },
  { path: ["pack", "create"], needles: ["<session>", "--sign"] },
  { path: ["pack", "verify"], needles: ["<session>", "--verify-key", "Exit 0 verified, 5"] },
  { path: ["pack", "keygen"], needles: ["Ed25519"] },
  { path: ["migrate"], needles: ["--dry-run", "--remove-legacy"] },
  { path: ["explain"], needles: ["--scope", "--details", "--diagram", "--width", "--json", "--html", "--open"] },
  { path: ["evidence"], needles: ["<offset>", "<digest>", "--page-offset", "--limit"] },
  { path: ["replicate"], needles: ["--to", "LOGBOOK_DATABASE_URL", "--watch", "--session", "--batch-lines", "exit 5"] },
  { path: ["mcp"], needles: ["Model Context Protocol", "read_turn", "logbook://session/{id}", "max_tokens"] },
  { path: ["serve"], needles: ["--port", "--host", "--open", "127.0.0.1", "token", "0.0.0.0"] }
]

const helpOf = (path: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    yield* Command.runWith(logbookCli, { version: CLI_VERSION })([...path, "--help"])
    return (yield* TestConsole.logLines).map(String).join("\n")
  }).pipe(Effect.provide(Layer.mergeAll(NodeServices.layer, storeLayerNode)))

describe("logbook --help", () => {
  for (const command of COMMANDS) {
    const name = ["logbook", ...command.path].join(" ")
    it.effect(`${name} --help describes the command, its flags and an example`, () =>
      Effect.gen(function*() {
        const help = yield* helpOf(command.path)
        assert.include(help, "DESCRIPTION")
        assert.include(help, `USAGE\n  ${name}`)
        for (const needle of command.needles) assert.include(help, needle)
        // Every command but the `retention` group (whose subcommands carry them) shows examples.
        if (name !== "logbook retention") {
          assert.include(help, "EXAMPLES")
          assert.include(help, `${name} `)
        }
      }))
  }
})

layer(Layer.effectDiscard(Effect.sync(assertBuilt)), { excludeTestServices: true })("logbook binary usage", (it) => {
  it.effect("usage errors exit 2 with the error and the usage line on stderr; help and version exit 0", () =>
    Effect.gen(function*() {
      const ws = yield* workspace
      const [unknown, missing, badValue, badRange, help, version] = yield* Effect.all([
        run(["bogus"], { cwd: ws }),
        run(["show"], { cwd: ws }),
        run(["turn", "s", "one"], { cwd: ws }),
        run(["sessions", "--limit", "0"], { cwd: ws }),
        run(["--help"], { cwd: ws }),
        run(["--version"], { cwd: ws })
      ], { concurrency: 2 })
      for (const r of [unknown, missing, badValue, badRange]) {
        assert.strictEqual(r.code, 2, r.stderr)
        assert.strictEqual(r.stdout, "")
        assert.include(r.stderr, "usage: logbook")
        assert.include(r.stderr, "--help")
      }
      assert.include(unknown.stderr, "Unknown subcommand \"bogus\"")
      assert.include(missing.stderr, "logbook show: Missing required argument: session")
      assert.include(badValue.stderr, "logbook turn: ")
      assert.include(badRange.stderr, "--limit must be at least 1, got 0")
      assert.strictEqual(help.code, 0)
      assert.include(help.stdout, "SUBCOMMANDS")
      assert.strictEqual(version.code, 0)
      assert.include(version.stdout, CLI_VERSION)
    }))
})
