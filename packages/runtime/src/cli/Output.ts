/**
 * How the `logbook` CLI writes: data to stdout (through the `Stdio` sink, so a slow reader
 * applies backpressure instead of the process buffering a whole log), messages and notes to
 * stderr, progress to stderr only when it is a terminal. Also the small text formatters the
 * commands share (byte sizes, aligned tables, shell-quoted arguments).
 */
import { Effect, PlatformError, Stdio, Stream } from "effect"

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

/** The lines as newline-terminated texts of at most {@link LINES_PER_WRITE} lines each. */
function* lineChunks(lines: ReadonlyArray<string>): Generator<string> {
  for (let at = 0; at < lines.length; at += LINES_PER_WRITE) {
    let text = ""
    const end = Math.min(lines.length, at + LINES_PER_WRITE)
    for (let i = at; i < end; i++) text += `${lines[i]}\n`
    yield text
  }
}

/**
 * Writes an array of lines to stdout in chunks (any length: the array is never spread into a
 * call, and output starts before the last line is formatted into text).
 */
export const printAll = (lines: ReadonlyArray<string>) =>
  Stdio.Stdio.use((stdio) =>
    untilReaderGone(Stream.run(Stream.fromIterable({ [Symbol.iterator]: () => lineChunks(lines) }), stdio.stdout()))
  )

/** Writes one line (or a few, joined) to stdout; a list of any length goes through {@link printAll}. */
export const printLines = (...lines: ReadonlyArray<string>) => printAll(lines)

/** Writes a value as pretty JSON to stdout (the `--json` output of every command). */
export const printJson = (value: unknown) => writeOut(`${JSON.stringify(value, null, 2)}\n`)

/** Writes one line to stderr (notes, warnings, error messages: never data). */
export const note = (line: string) =>
  Stdio.Stdio.use((stdio) => Stream.run(Stream.succeed(`${line}\n`), stdio.stderr()))

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
 * Runs `f` with a progress callback for long rescans when stderr is a terminal (`undefined`
 * otherwise, so pipes and logs never see carriage returns). The line is cleared at the end.
 *
 * **Gotchas**: the callback is called synchronously from inside a scan, so it writes to
 * `process.stderr` directly rather than through an effect.
 */
export const withProgress = <A, E, R>(
  label: string,
  f: (onProgress: ((bytes: number, total: number) => void) | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Stdio.Stdio> =>
  Effect.gen(function*() {
    const stdio = yield* Stdio.Stdio
    if (!(yield* stdio.stderrIsTerminal)) return yield* f(undefined)
    let shown = false
    const onProgress = (bytes: number, total: number) => {
      if (total < PROGRESS_MIN_BYTES) return
      shown = true
      const percent = total === 0 ? 100 : Math.floor((bytes / total) * 100)
      process.stderr.write(`\r${label}: ${percent}% of ${formatBytes(total)}`)
    }
    return yield* f(onProgress).pipe(
      Effect.ensuring(Effect.sync(() => {
        if (shown) process.stderr.write("\r\u001b[K")
      }))
    )
  })

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
