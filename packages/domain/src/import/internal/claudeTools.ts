/**
 * What a Claude Code tool call records beyond its name, for the transcript mapper
 * (docs/import.md#commands-exit-codes-and-diffs): the diff of an `Edit`, `MultiEdit`, `Write` or
 * `NotebookEdit` — from the result's `structuredPatch` when there is one, else from the call's
 * old/new strings or written content — and the outcome of a `Bash` call, whose result carries
 * `is_error` and `interrupted` but no exit code field.
 *
 * **Gotchas**: Claude Code marks a `Bash` result `is_error` exactly when the command exited
 * non-zero (or was refused), so a result without `is_error` that was neither interrupted nor
 * sent to the background is recorded as exit code 0; a non-zero code is read from the result
 * text (`Exit code N`) when it says so, else left out.
 */
import { arr, field, str } from "./foreignJson.ts"
import type { DiffFields } from "./toolEvidence.ts"
import { creationDiff, diffFields, exitCodeInText, replacementDiff, structuredPatchDiff } from "./toolEvidence.ts"

/** The diff a file tool's *input* describes (before its result is known), and whether it is partial. */
export interface InputDiff {
  readonly diff: string
  readonly partial: boolean
}

/** The diff of a file tool call from its input: old/new strings, written content or notebook source. */
export const claudeInputDiff = (name: string, input: unknown, path: string): InputDiff | undefined => {
  switch (name) {
    case "Edit": {
      const before = str(input, "old_string")
      const after = str(input, "new_string")
      return before === undefined || after === undefined ? undefined : {
        diff: replacementDiff(path, before, after),
        // `replace_all` changes every occurrence; the strings show one.
        partial: field(input, "replace_all") === true
      }
    }
    case "MultiEdit": {
      const edits = arr(input, "edits") ?? []
      const parts: Array<string> = []
      for (const e of edits) {
        const before = str(e, "old_string")
        const after = str(e, "new_string")
        if (before !== undefined && after !== undefined) parts.push(replacementDiff(path, before, after))
      }
      return parts.length === 0 ? undefined : { diff: parts.join(""), partial: parts.length < edits.length }
    }
    case "Write": {
      const content = str(input, "content")
      // Whether the file existed is known only from the result; until then the diff is partial.
      return content === undefined ? undefined : { diff: creationDiff(path, content), partial: true }
    }
    case "NotebookEdit": {
      const source = str(input, "new_source")
      return source === undefined ? undefined : {
        diff: replacementDiff(path, "", source),
        partial: str(input, "edit_mode") !== "insert"
      }
    }
    default:
      return undefined
  }
}

/**
 * The diff fields of a finished file tool call: the result's `structuredPatch`, a created file's
 * content (`type: "create"`), else the input's diff (partial where the input cannot say all).
 */
export const claudeResultDiff = (
  name: string,
  path: string,
  toolUseResult: unknown,
  input: InputDiff | undefined
): DiffFields => {
  const patched = structuredPatchDiff(path, field(toolUseResult, "structuredPatch"))
  if (patched !== undefined) return diffFields(patched)
  if (name === "Write" && str(toolUseResult, "type") === "create") {
    const content = str(toolUseResult, "content")
    if (content !== undefined) return diffFields(creationDiff(path, content))
    if (input !== undefined) return diffFields(input.diff)
  }
  return input === undefined ? {} : diffFields(input.diff, input.partial)
}

/** The status and exit code of a finished `Bash` call. */
export interface BashOutcome {
  readonly status: "completed" | "failed"
  readonly exit_code?: number
}

/** The outcome of a `Bash` result (see the module's gotcha on how the exit code is known). */
export const claudeBashOutcome = (
  isError: boolean,
  output: string,
  toolUseResult: unknown,
  background: boolean
): BashOutcome => {
  if (field(toolUseResult, "interrupted") === true) return { status: "failed" }
  if (isError) {
    const code = exitCodeInText(output)
    return code === undefined ? { status: "failed" } : { status: "failed", exit_code: code }
  }
  if (background || str(toolUseResult, "backgroundTaskId") !== undefined) return { status: "completed" }
  return { status: "completed", exit_code: 0 }
}
