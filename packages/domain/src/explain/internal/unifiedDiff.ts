/**
 * The unified-diff reading of the explanation: for each path of a recorded file change, the
 * new-side start line of its first hunk (where a reader should look), how many lines changed and
 * whether an added line declares public API. It feeds the change list and the review signals;
 * kept apart because it is text parsing, not folding.
 *
 * **Gotchas**: a diff of a single-path change counts hunks before any `+++` header for that
 * path; a `---` line followed by `+++` is a header even right after a hunk (multi-file diffs); a `+++` target is matched to the recorded paths by suffix either way, and an unmatched
 * target is kept under its own name.
 */

/** What a diff says about one path (mutated while the diff is read, then only read). */
export interface PathDiff {
  line: number | null
  changed: number
  publicApi: boolean
}

/** A hunk header; group 1 is the new-side start line. */
const HUNK = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/u
/**
 * A hunk header without line numbers: `@@` alone or followed by context text, as Codex's
 * `apply_patch` writes them and as imported old/new-string edits are written (the source does not
 * say where the text was). Its lines count as changed; the start line stays unknown.
 */
const BARE_HUNK = /^@@(?: |$)/u
/** An added line that declares public API (TypeScript/JavaScript, Rust, Java/C#/Kotlin). */
const PUBLIC_DECL = /^\+\s*(?:export\b|pub\b|pub\(crate\)|public\b)/u

/** A `+++`/`---` path without its tab-separated timestamp and its `a/` or `b/` prefix. */
const stripDiffPrefix = (p: string): string => {
  const clean = p.split("\t")[0] ?? p
  return clean.startsWith("a/") || clean.startsWith("b/") ? clean.slice(2) : clean
}

/** Reads a unified diff of a change to `paths`: one {@link PathDiff} per path it touches. */
export const parseDiff = (diff: string, paths: ReadonlyArray<string>): Map<string, PathDiff> => {
  const out = new Map<string, PathDiff>()
  const single = paths.length === 1 ? paths[0] : undefined
  let current: PathDiff | undefined = single === undefined ? undefined : { line: null, changed: 0, publicApi: false }
  if (single !== undefined && current !== undefined) out.set(single, current)
  let inHunk = false
  const lines = diff.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ""
    if (line.startsWith("+++ ")) {
      const target = stripDiffPrefix(line.slice(4).trim())
      const name = target === "/dev/null" ? undefined : paths.find((p) => p === target || p.endsWith(`/${target}`))
        ?? paths.find((p) => target.endsWith(`/${p}`)) ?? target
      if (name !== undefined) {
        current = out.get(name) ?? { line: null, changed: 0, publicApi: false }
        out.set(name, current)
      }
      inHunk = false
      continue
    }
    // A `---` line is the next file's header when a `+++` follows it (a removed line starting
    // with "-- " inside a hunk is not).
    if (line.startsWith("--- ") && (!inHunk || (lines[i + 1] ?? "").startsWith("+++ "))) continue
    if (line.startsWith("diff ")) {
      inHunk = false
      continue
    }
    const hunk = HUNK.exec(line)
    if (hunk !== null) {
      inHunk = true
      if (current !== undefined && current.line === null) current.line = Number(hunk[1])
      continue
    }
    if (BARE_HUNK.test(line)) {
      inHunk = true
      continue
    }
    if (!inHunk || current === undefined) continue
    if (line.startsWith("+")) {
      current.changed++
      if (!current.publicApi && PUBLIC_DECL.test(line)) current.publicApi = true
    } else if (line.startsWith("-")) {
      current.changed++
    }
  }
  return out
}
