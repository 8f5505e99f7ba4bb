/**
 * Reading Claude Code's separated tool results back (docs/import.md#separated-tool-results): a
 * transcript record whose `tool_result` is a `<persisted-output>` placeholder gets the text of
 * `<session>/tool-results/<name>` in its place before it is mapped, so the command output or tool
 * result arrives whole. The session directory is the transcript's own: `<project>/<session>/`
 * beside `<project>/<session>.jsonl`, and for a subagent (`<session>/subagents/…/agent-*.jsonl`,
 * at any depth) the `<session>/` above its `subagents/` (subagents share the session's directory).
 *
 * **Gotchas**: a file is read only when it is a regular file in a real directory (no link on the
 * way from the transcript's directory is followed), at most
 * {@link MAX_SEPARATED_RESULT_BYTES}: a larger one keeps its first and last halves of that around
 * a line saying how many bytes were left out (cut at character boundaries). A missing or
 * unreadable file is not a failure: the record is mapped as the transcript has it and the file is
 * named in the report (`separated_results_missing`).
 */
import { claudeToolResultRefs, withClaudeToolResults } from "@logbook/domain"
import { SessionFs } from "@logbook/store"
import { Effect, Option, Result } from "effect"
import * as NodePath from "node:path"

/** The most of one separated tool result that is imported: 1 MiB (its first and last 512 KiB). */
export const MAX_SEPARATED_RESULT_BYTES = 1024 * 1024

/** The `tool-results/` directory of the session a transcript at `source` belongs to. */
export const toolResultsDirOf = (source: string): string => {
  const parts = NodePath.dirname(source).split(NodePath.sep)
  const subagents = parts.lastIndexOf("subagents")
  const sessionDir = subagents > 0
    ? parts.slice(0, subagents).join(NodePath.sep)
    : NodePath.join(NodePath.dirname(source), NodePath.basename(source, ".jsonl"))
  return NodePath.join(sessionDir, "tool-results")
}

const isContinuation = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80

const decoder = new TextDecoder("utf-8")

/** What reading the separated files of one record gave. */
export interface SeparatedResults {
  /** The record with each placeholder whose file was read replaced by the file's text. */
  readonly record: unknown
  readonly read: number
  /** Files over {@link MAX_SEPARATED_RESULT_BYTES}, imported with their middle left out. */
  readonly cut: number
  /** The paths of files the record names that could not be read. */
  readonly missing: ReadonlyArray<string>
}

const readText = (path: string, size: number) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    if (size <= MAX_SEPARATED_RESULT_BYTES) {
      return { text: decoder.decode(yield* fs.readRange(path, 0, size)), cut: false }
    }
    const half = MAX_SEPARATED_RESULT_BYTES / 2
    // A few bytes more on each side, to find a character boundary near each cut.
    const head = yield* fs.readRange(path, 0, half + 4)
    let end = half
    while (end > 0 && isContinuation(head[end])) {
      end--
    }
    const tail = yield* fs.readRange(path, size - half - 4, size)
    let start = 4
    while (start < tail.length && isContinuation(tail[start])) start++
    const left = size - end - (tail.length - start)
    const text = `${decoder.decode(head.subarray(0, end))}\n[… ${left} bytes of this tool result not imported …]\n` +
      decoder.decode(tail.subarray(start))
    return { text, cut: true }
  })

/**
 * Reads the separated tool results a record of the transcript at `source` names; undefined when
 * it names none (the common case, decided without touching the disk).
 */
export const readSeparatedResults = Effect.fn("Importer.readSeparatedResults")(
  function*(source: string, record: unknown) {
    const refs = claudeToolResultRefs(record)
    if (refs.length === 0) return undefined
    const fs = yield* SessionFs
    const dir = toolResultsDirOf(source)
    const isDirectory = (path: string) =>
      Effect.map(
        Effect.result(fs.lstat(path)),
        (info) => Result.isSuccess(info) && Option.isSome(info.success) && info.success.value.type === "Directory"
      )
    // Neither the session directory nor its tool-results/ may be a link (as nothing of a walk is followed).
    const inPlace = (yield* isDirectory(NodePath.dirname(dir))) && (yield* isDirectory(dir))
    const texts = new Map<string, string>()
    const missing: Array<string> = []
    let cut = 0
    for (const ref of refs) {
      const path = NodePath.join(dir, ref.file)
      const info = yield* Effect.result(fs.lstat(path))
      if (!inPlace || Result.isFailure(info) || Option.isNone(info.success) || info.success.value.type !== "File") {
        missing.push(path)
        continue
      }
      const read = yield* Effect.result(readText(path, info.success.value.size))
      if (Result.isFailure(read)) {
        missing.push(path)
        continue
      }
      texts.set(ref.toolUseId, read.success.text)
      if (read.success.cut) cut++
    }
    return { record: withClaudeToolResults(record, texts), read: texts.size, cut, missing } satisfies SeparatedResults
  }
)
