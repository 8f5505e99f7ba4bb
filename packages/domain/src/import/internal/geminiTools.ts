/**
 * What a Gemini CLI tool call records beyond its name, for the session mapper
 * (docs/import.md#commands-exit-codes-and-diffs): the exit code a `run_shell_command` output
 * ends with (`Exit Code: N`), and the diff of a `replace` / `edit` / `write_file` — the
 * `resultDisplay.fileDiff` newer versions write, else one built from the call's
 * `old_string`/`new_string` or written `content`.
 *
 * **Gotchas**: a `write_file` over an existing file records only the new content, so its diff
 * is marked incomplete; the call says whether the file was new only in its output text
 * ("Successfully created …" vs "… overwrote …").
 */
import { field, str } from "./foreignJson.ts"
import type { DiffFields } from "./toolEvidence.ts"
import { creationDiff, diffFields, exitCodeInText, replacementDiff } from "./toolEvidence.ts"

/** The status and exit code of a finished `run_shell_command`. */
export const geminiShellOutcome = (
  failed: boolean,
  output: string
): { readonly status: "completed" | "failed"; readonly exit_code?: number } => {
  const code = exitCodeInText(output)
  if (code === undefined) return { status: failed ? "failed" : "completed" }
  return { status: failed || code !== 0 ? "failed" : "completed", exit_code: code }
}

const created = (output: string): boolean => /^Successfully created/u.test(output)

/** The kind of change a file tool made: `write_file` of a new file adds it, anything else updates. */
export const geminiChangeKind = (name: string, output: string): "add" | "update" =>
  name === "write_file" && (created(output) || !/overwrote/u.test(output)) ? "add" : "update"

/** The diff fields of a finished file tool call. */
export const geminiFileDiff = (
  name: string,
  args: unknown,
  path: string,
  resultDisplay: unknown,
  output: string
): DiffFields => {
  const recorded = str(resultDisplay, "fileDiff")
  if (recorded !== undefined && recorded.length > 0) return diffFields(recorded)
  if (name === "write_file") {
    const content = str(args, "content")
    return content === undefined ? {} : diffFields(creationDiff(path, content), !created(output))
  }
  const before = str(args, "old_string")
  const after = str(args, "new_string")
  if (before === undefined || after === undefined) return {}
  // `expected_replacements` above one changes several occurrences; the strings show one.
  const many = typeof field(args, "expected_replacements") === "number" && field(args, "expected_replacements") !== 1
  return diffFields(replacementDiff(path, before, after), many)
}
