/**
 * The `logbook` command tree run in-process through the testkit's CLI runner: the same commands,
 * rendering and exit codes as the binary, without a Node process per invocation. Most CLI tests
 * use this; the child-process harness (`harness.ts`) keeps the few that must run the binary as
 * users do (startup, signals, the current directory, environment variables, usage errors).
 */
import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import type { CliRun } from "@logbook/testkit"
import { runCliInProcess } from "@logbook/testkit"
import { ConfigProvider, Effect, Layer } from "effect"
import { Command } from "effect/cli"
import { logbookCli } from "../../src/Cli.ts"
import { renderCause } from "../../src/cli/ErrorRendering.ts"
import { CLI_VERSION, Invocation } from "../../src/cli/Root.ts"
import { storeLayerNode } from "../../src/SessionMemory.ts"

/** Node services except `Stdio`, which the runner captures. */
const nodeServices = Layer.provideMerge(
  NodeChildProcessSpawner.layer,
  Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)
)

/** Options of {@link logbook}. */
export interface InProcessOptions {
  /** Standard input (default: empty). */
  readonly input?: string
  /** The environment the CLI's configuration sees (default: none, so `LOGBOOK_SESSIONS_DIR` is unset). */
  readonly env?: Record<string, string>
  /** Whether stdout is a terminal (default: no, as when piped). */
  readonly terminal?: boolean
}

/** Runs `logbook <args>` in-process; pass `--workspace` or `--sessions-dir` (the cwd is the runner's). */
export const logbook = (args: ReadonlyArray<string>, options: InProcessOptions = {}): Effect.Effect<CliRun> =>
  runCliInProcess(
    Command.runWith(logbookCli, { version: CLI_VERSION })(args).pipe(
      Effect.provideService(Invocation, "logbook"),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: options.env ?? {} })),
      Effect.provide(Layer.mergeAll(storeLayerNode, nodeServices))
    ),
    {
      render: renderCause,
      ...(options.input === undefined ? {} : { stdin: options.input }),
      ...(options.terminal === true ? { stdoutIsTerminal: true } : {})
    }
  )
