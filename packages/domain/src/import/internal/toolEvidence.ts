/**
 * What the importers carry over from a source's tool calls besides their names: unified diffs
 * built from what each format records of an edit (old/new strings, structured patches, written
 * content, `apply_patch` bodies), exit codes read from output text, and the `verification`
 * activity the classifier reads from a command line (docs/import.md#commands-exit-codes-and-diffs).
 * Kept in one module so every mapper writes the same diff shape.
 *
 * **Gotchas**: a diff built from old/new strings has no line numbers (the source does not say
 * where the text was), so its hunk header is a bare `@@` — the explanation then knows the lines
 * changed but not where. Diffs longer than {@link MAX_IMPORTED_DIFF_CHARS} are cut and flagged
 * `diff_incomplete` so a huge `Write` does not bloat the log.
 */
import type { ThreadEvent } from "../../contract/ThreadEvent.ts"
import { isVerificationCommand } from "../../explain/Explanation.ts"
import { field, num } from "./foreignJson.ts"

/** A diff longer than this is cut at a line boundary and marked incomplete. */
export const MAX_IMPORTED_DIFF_CHARS = 256 * 1024

/** The diff fields of a `file_change` body: `unified_diff` and, when it is partial, `diff_incomplete`. */
export interface DiffFields {
  readonly unified_diff?: string
  readonly diff_incomplete?: boolean
}

/** The lines of a text, without the empty line a final newline would leave. */
const linesOf = (text: string): Array<string> => {
  if (text.length === 0) return []
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** The diff fields of a diff text, cut when too long; `partial` marks a diff known to miss lines. */
export const diffFields = (diff: string | undefined, partial = false): DiffFields => {
  if (diff === undefined || diff.length === 0) return {}
  if (diff.length <= MAX_IMPORTED_DIFF_CHARS) {
    return partial
      ? { unified_diff: diff, diff_incomplete: true }
      : { unified_diff: diff }
  }
  const cut = diff.lastIndexOf("\n", MAX_IMPORTED_DIFF_CHARS)
  return { unified_diff: diff.slice(0, cut > 0 ? cut + 1 : MAX_IMPORTED_DIFF_CHARS), diff_incomplete: true }
}

/** `a/<path>` / `b/<path>` (an absolute path keeps one slash: `a/Users/…`). */
const side = (prefix: "a" | "b", path: string): string =>
  path.startsWith("/") ? `${prefix}${path}` : `${prefix}/${path}`

const header = (path: string, added: boolean, deleted: boolean): string =>
  `--- ${added ? "/dev/null" : side("a", path)}\n+++ ${deleted ? "/dev/null" : side("b", path)}\n`

/**
 * A diff replacing `oldText` by `newText` in `path` (an `Edit`/`replace` call): the lines the two
 * have in common at either end become context, the rest removed and added lines under a bare `@@`.
 */
export const replacementDiff = (path: string, oldText: string, newText: string): string => {
  const before = linesOf(oldText)
  const after = linesOf(newText)
  let head = 0
  while (head < before.length && head < after.length && before[head] === after[head]) head++
  let tail = 0
  while (
    tail < before.length - head && tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  ) tail++
  const body = [
    ...before.slice(0, head).map((l) => ` ${l}`),
    ...before.slice(head, before.length - tail).map((l) => `-${l}`),
    ...after.slice(head, after.length - tail).map((l) => `+${l}`),
    ...before.slice(before.length - tail).map((l) => ` ${l}`)
  ]
  return `${header(path, false, false)}@@\n${body.join("\n")}\n`
}

const SEARCH = /^(?:<{7}|-{7}) SEARCH\s*$/u
const DIVIDER = /^={7}\s*$/u
const REPLACE = /^(?:>{7}|\+{7}) REPLACE\s*$/u
// Roo Code's apply_diff puts the line a block applies at (and a `-------` rule) after SEARCH.
const BLOCK_META = /^(?::start_line:\s*\d+|:end_line:\s*\d+|-{7})\s*$/u

/**
 * The SEARCH/REPLACE blocks Cline's `replace_in_file` and Roo Code's `apply_diff` send
 * (`<<<<<<< SEARCH` or `------- SEARCH`, `=======`, `>>>>>>> REPLACE` or `+++++++ REPLACE`) as a
 * unified diff of `path`, one bare `@@` hunk per block; undefined when the text holds no complete
 * block.
 */
export const searchReplaceDiff = (path: string, text: string): string | undefined => {
  const hunks: Array<string> = []
  let state: "out" | "search" | "replace" = "out"
  let before: Array<string> = []
  let after: Array<string> = []
  for (const line of text.split(/\r?\n/u)) {
    if (state === "out") {
      if (SEARCH.test(line)) {
        state = "search"
        before = []
        after = []
      }
    } else if (state === "search") {
      if (DIVIDER.test(line)) state = "replace"
      else if (!(before.length === 0 && BLOCK_META.test(line))) before.push(line)
    } else if (REPLACE.test(line)) {
      const diff = replacementDiff(path, before.join("\n"), after.join("\n"))
      hunks.push(diff.slice(diff.indexOf("@@")))
      state = "out"
    } else {
      after.push(line)
    }
  }
  return hunks.length === 0 ? undefined : header(path, false, false) + hunks.join("")
}

/** A diff creating `path` with `content` (every line added, from line 1). */
export const creationDiff = (path: string, content: string): string => {
  const lines = linesOf(content)
  return `${header(path, true, false)}@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join("\n")}\n`
}

/**
 * A diff from Claude Code's `structuredPatch` (hunks of `oldStart`, `oldLines`, `newStart`,
 * `newLines` and prefixed `lines`); undefined when it has no usable hunk.
 */
export const structuredPatchDiff = (path: string, patch: unknown): string | undefined => {
  if (!Array.isArray(patch) || patch.length === 0) return undefined
  const hunks: Array<string> = []
  for (const h of patch) {
    const lines = field(h, "lines")
    const oldStart = num(h, "oldStart")
    const newStart = num(h, "newStart")
    if (!Array.isArray(lines) || oldStart === undefined || newStart === undefined) return undefined
    const text = lines.filter((l): l is string => typeof l === "string")
    hunks.push(
      `@@ -${oldStart},${num(h, "oldLines") ?? 0} +${newStart},${num(h, "newLines") ?? 0} @@\n${
        text.map((l) => `${l}\n`).join("")
      }`
    )
  }
  return header(path, false, false) + hunks.join("")
}

/**
 * A Codex `apply_patch` body (`*** Begin Patch`, `*** Add|Update|Delete File: p`, `*** Move to:`,
 * `@@` hunks) as a unified diff: one `---`/`+++` header per file, an added file's lines under
 * `@@ -0,0 +1,N @@`, an update's hunks as the patch has them (their `@@` headers carry context
 * text, not line numbers).
 */
export const applyPatchDiff = (patch: string): string => {
  const files: Array<{ kind: string; path: string; target: string; body: Array<string> }> = []
  for (const line of patch.split("\n")) {
    const file = /^\*\*\* (Add|Update|Delete) File: (.+?)\s*$/u.exec(line)
    if (file !== null) {
      const path = file[2] ?? ""
      files.push({ kind: file[1] ?? "Update", path, target: path, body: [] })
      continue
    }
    const current = files[files.length - 1]
    const move = /^\*\*\* Move to: (.+?)\s*$/u.exec(line)
    if (move !== null && current !== undefined) {
      current.target = move[1] ?? current.path
      continue
    }
    if (line.startsWith("*** ") || current === undefined) continue
    current.body.push(line)
  }
  let out = ""
  for (const f of files) {
    out += `--- ${f.kind === "Add" ? "/dev/null" : side("a", f.path)}\n+++ ${
      f.kind === "Delete" ? "/dev/null" : side("b", f.target)
    }\n`
    const body = f.body.filter((l, i) => l.length > 0 || i < f.body.length - 1)
    if (f.kind === "Add") out += `@@ -0,0 +1,${body.length} @@\n`
    else if (f.kind === "Update" && !(body[0] ?? "").startsWith("@@")) out += "@@\n"
    if (f.kind !== "Delete") out += body.map((l) => `${l}\n`).join("")
  }
  return out
}

/**
 * The exit code a tool's output text reports: Gemini CLI's `Exit Code: N` line, Claude Code's
 * `Exit code N` first line, Codex's `Exit code: N` / `Process exited with code N`.
 */
export const exitCodeInText = (text: string): number | undefined => {
  const m = /^(?:Error: )?(?:Exit [Cc]ode:? |Process exited with code )(-?\d+)\s*$/mu.exec(text)
  if (m === null) return undefined
  const n = Number(m[1])
  return Number.isInteger(n) && n >= -2147483648 && n <= 2147483647 ? n : undefined
}

/**
 * An item event with `context.activity` set to `verification` when it is a command execution the
 * classifier recognises (and its source set no activity); any other event is returned as is.
 */
export const labelVerification = (event: ThreadEvent): ThreadEvent => {
  if (event.type !== "item.started" && event.type !== "item.updated" && event.type !== "item.completed") return event
  const { item } = event
  if (item.type !== "command_execution" || item.context === undefined || item.context.activity !== undefined) {
    return event
  }
  if (!isVerificationCommand(item.command)) return event
  return { ...event, item: { ...item, context: { ...item.context, activity: "verification" } } }
}
