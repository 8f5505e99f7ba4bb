/**
 * Runs a CLI program in-process with captured standard streams: what the command printed on
 * stdout and stderr and the exit code it ended with, exactly as the binary would report them,
 * but without the cost of a Node process per invocation (so CLI suites hold on a busy machine).
 * The caller supplies the program (e.g. `Command.runWith(cli, …)(args)`) and how a failure
 * renders, so the runner stays independent of any one command tree.
 */
import { Cause, Console, Effect, Sink, Stdio, Stream } from "effect"

/** What one in-process invocation did. */
export interface CliRun {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
}

/** How a failure of the program is shown: the line for stderr (none when already shown) and the exit code. */
export type RenderFailure<E> = (cause: Cause.Cause<E>) => {
  readonly text: string | undefined
  readonly exitCode: number
}

/** Options of {@link runCliInProcess}. */
export interface CliRunOptions<E> {
  readonly render: RenderFailure<E>
  /** Standard input, fully available and then closed (default: empty). */
  readonly stdin?: string
  /** Whether stdout says it is a terminal (default: no, as when piped). */
  readonly stdoutIsTerminal?: boolean
}

/** A console whose `log`/`info` go to `out` and `error`/`warn` to `err`; everything else is silent. */
const capturingConsole = (out: (text: string) => void, err: (text: string) => void): Console.Console => {
  const line = (write: (text: string) => void) => (...args: ReadonlyArray<unknown>) =>
    write(`${args.map((a) => typeof a === "string" ? a : JSON.stringify(a)).join(" ")}\n`)
  const silent = () => undefined
  return {
    assert: silent,
    clear: silent,
    count: silent,
    countReset: silent,
    debug: line(err),
    dir: silent,
    dirxml: silent,
    error: line(err),
    group: silent,
    groupCollapsed: silent,
    groupEnd: silent,
    info: line(out),
    log: line(out),
    table: silent,
    time: silent,
    timeEnd: silent,
    timeLog: silent,
    trace: line(err),
    warn: line(err)
  }
}

/**
 * Runs `program` with `Stdio` and `Console` captured and returns its output and exit code.
 * Interruption is not caught (the test is being torn down).
 *
 * **Gotchas**: the program runs in the test's process — its current directory and environment
 * are the test runner's. Pass `--workspace` / `--sessions-dir` explicitly; tests about the
 * current directory or environment variables belong to the child-process suites.
 */
export const runCliInProcess = <E, R>(
  program: Effect.Effect<void, E, R>,
  options: CliRunOptions<E>
): Effect.Effect<CliRun, never, Exclude<R, Stdio.Stdio>> =>
  Effect.gen(function*() {
    const out: Array<string> = []
    const err: Array<string> = []
    const decoder = new TextDecoder()
    const collect = (into: Array<string>) => () =>
      Sink.forEach((chunk: string | Uint8Array) =>
        Effect.sync(() => void into.push(typeof chunk === "string" ? chunk : decoder.decode(chunk)))
      )
    const stdio = Stdio.make({
      stdoutIsTerminal: Effect.succeed(options.stdoutIsTerminal === true),
      args: Effect.succeed([]),
      stdin: Stream.make(new TextEncoder().encode(options.stdin ?? "")),
      stdout: collect(out),
      stderr: collect(err)
    })
    const exit = yield* program.pipe(
      Effect.provideService(Stdio.Stdio, stdio),
      Effect.provideService(Console.Console, capturingConsole((t) => out.push(t), (t) => err.push(t))),
      Effect.exit
    )
    let exitCode = 0
    if (exit._tag === "Failure") {
      if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
      const rendered = options.render(exit.cause)
      if (rendered.text !== undefined) err.push(`${rendered.text}\n`)
      exitCode = rendered.exitCode
    }
    return { exitCode, stdout: out.join(""), stderr: err.join("") }
  })
