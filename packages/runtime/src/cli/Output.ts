/**
 * How the `logbook` CLI writes: data to stdout (through the `Stdio` sink, so a slow reader
 * applies backpressure instead of the process buffering a whole log), messages and notes to
 * stderr, progress to stderr only when it is a terminal. Also the small text formatters the
 * commands share (byte sizes, aligned tables, shell-quoted arguments). Lines, JSON and notes are
 * made terminal-safe here (docs/security.md#terminal-output): recorded text never drives a terminal.
 */
import { terminalSafe, terminalSafeJson } from "@logbook/domain"
import { Duration, Effect, PlatformError, Schedule, Stdio, Stream } from "effect"

/** The reader of stdout went away (`logbook events x | head`): not an error, just the end of output. */
const readerGone = (error: unknown): error is PlatformError.PlatformError => {
  if (!PlatformError.isPlatformError(error)) return false
  const cause: unknown = error.reason.cause
  return typeof cause === "object" && cause !== null && "code" in cause && cause.code === "EPIPE"
}

/** Ends quietly when stdout's reader has gone away; every other output error stays an error. */
const untilReaderGone = <E, R>(effect: Effect.Effect<void, E, R>): Effect.Effect<void, E, R> =>
  Effect.catchIf(effect, readerGone, () => Effect.void)

/** Writes text to stdout as is. */
export const writeOut = (text: string) =>
  Stdio.Stdio.use((stdio) => untilReaderGone(Stream.run(Stream.succeed(text), stdio.stdout())))

/** Lines per write of {@link printAll}: one write per chunk, never one huge string or call. */
const LINES_PER_WRITE = 1024

/** The lines, each shown through `show`, as newline-terminated texts of at most {@link LINES_PER_WRITE} lines each. */
function* lineChunks(lines: ReadonlyArray<string>, show: (line: string) => string): Generator<string> {
  for (let at = 0; at < lines.length; at += LINES_PER_WRITE) {
    let text = ""
    const end = Math.min(lines.length, at + LINES_PER_WRITE)
    for (let i = at; i < end; i++) text += `${show(lines[i] ?? "")}\n`
    yield text
  }
}

const writeLines = (lines: ReadonlyArray<string>, show: (line: string) => string) =>
  Stdio.Stdio.use((stdio) =>
    untilReaderGone(
      Stream.run(Stream.fromIterable({ [Symbol.iterator]: () => lineChunks(lines, show) }), stdio.stdout())
    )
  )

/**
 * Writes an array of lines to stdout in chunks, control characters shown as visible escapes (any length: the array is never spread into a
 * call, and output starts before the last line is formatted into text).
 */
export const printAll = (lines: ReadonlyArray<string>) => writeLines(lines, terminalSafe)

/**
 * Writes lines that are already terminal-safe (they carry the CLI's own highlighting) in chunks,
 * as they are; anything recorded in them must have gone through `terminalSafe` first.
 */
export const printAllVerbatim = (lines: ReadonlyArray<string>) => writeLines(lines, (line) => line)

/** Writes one line (or a few, joined) to stdout; a list of any length goes through {@link printAll}. */
export const printLines = (...lines: ReadonlyArray<string>) => printAll(lines)

/** Writes a value as pretty JSON to stdout (the `--json` output of every command), C1 controls escaped. */
export const printJson = (value: unknown) => writeOut(`${terminalSafeJson(JSON.stringify(value, null, 2))}\n`)

/** Writes one line to stderr (notes, warnings, error messages: never data), made terminal-safe. */
export const note = (line: string) =>
  Stdio.Stdio.use((stdio) => Stream.run(Stream.succeed(`${terminalSafe(line)}\n`), stdio.stderr()))

/** Streams text pieces to stdout, one write per chunk of pieces; stops quietly when the reader goes away. */
export const streamOut = <E, R>(texts: Stream.Stream<string, E, R>) =>
  Stdio.Stdio.use((stdio) =>
    untilReaderGone(texts.pipe(
      Stream.mapArray((pieces) => [pieces.join("")] as const),
      Stream.run(stdio.stdout())
    ))
  )

/** Scans smaller than this finish too fast for a progress line to help. */
const PROGRESS_MIN_BYTES = 16 * 1024 * 1024

/**
 * Runs `f` with a progress line on stderr when stderr is a terminal (`undefined` otherwise, so
 * pipes and logs never see carriage returns). `f` gets a synchronous `report(text)` that only
 * records the latest text — scans and imports call it from inside their loops — and a fiber
 * writes that text through `Stdio` at most every 100 ms; the line is cleared when `f` ends,
 * however it ends. The one progress line of the CLI.
 */
export const withProgressLine = <A, E, R>(
  f: (report: ((text: string) => void) | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Stdio.Stdio> =>
  Effect.gen(function*() {
    const stdio = yield* Stdio.Stdio
    if (!(yield* stdio.stderrIsTerminal)) return yield* f(undefined)
    let latest: string | undefined
    let written: string | undefined
    const write = (text: string) => Effect.ignore(Stream.run(Stream.succeed(text), stdio.stderr()))
    const show = Effect.suspend(() => {
      if (latest === undefined || latest === written) return Effect.void
      written = latest
      return write(`\r\u001b[K${terminalSafe(latest)}`)
    })
    const clear = Effect.suspend(() => written === undefined ? Effect.void : write("\r\u001b[K"))
    return yield* Effect.scoped(Effect.gen(function*() {
      yield* Effect.forkScoped(Effect.repeat(show, Schedule.spaced(Duration.millis(100))))
      return yield* f((text) => {
        latest = text
      })
    })).pipe(Effect.ensuring(clear))
  })

/**
 * Runs `f` with a progress callback for long rescans (`<label>: 42% of 1.2 GiB`, only for scans
 * over 16 MiB) through {@link withProgressLine}.
 */
export const withProgress = <A, E, R>(
  label: string,
  f: (onProgress: ((bytes: number, total: number) => void) | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Stdio.Stdio> =>
  withProgressLine((report) =>
    f(
      report === undefined ? undefined : (bytes, total) => {
        if (total < PROGRESS_MIN_BYTES) return
        const percent = total === 0 ? 100 : Math.floor((bytes / total) * 100)
        report(`${label}: ${percent}% of ${formatBytes(total)}`)
      }
    )
  )

/** `1234` → `1.2 KiB`; exact below 1 KiB. */
export const formatBytes = (bytes: number): string => {
  if (bytes < 1024) return `${bytes} B`
  const units = ["KiB", "MiB", "GiB", "TiB"]
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${units[unit]}`
}

/** Aligns rows into columns (two spaces apart); `right` lists the columns to right-align. */
export const table = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  right: ReadonlyArray<number> = []
): Array<string> => {
  const widths = header.map((h, i) => rows.reduce((w, r) => Math.max(w, (r[i] ?? "").length), h.length))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => {
      const width = widths[i] ?? cell.length
      return right.includes(i) ? cell.padStart(width) : cell.padEnd(width)
    }).join("  ").trimEnd()
  return [line(header), ...rows.map(line)]
}

/** Quotes an argument for a POSIX shell when it needs it (`it's` → `'it'\''s'`). */
export const shellQuote = (arg: string): string =>
  /^[A-Za-z0-9_./:=@%+-]+$/u.test(arg) ? arg : `'${arg.replace(/'/gu, `'\\''`)}'`
