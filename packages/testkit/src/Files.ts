/**
 * Small synchronous file edits tests use to set up or damage a session directory the way a
 * crash, an older version or an attacker would, and to look at what the store left.
 */
import * as fs from "node:fs"

/** Rewrites a JSON file through `edit` (compact output, like the store writes). */
export const editJson = (file: string, edit: (value: Record<string, unknown>) => unknown): void => {
  const value = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>
  fs.writeFileSync(file, JSON.stringify(edit(value)))
}

/** File mode bits (permissions only) of `p`, links not followed. */
export const modeOf = (p: string): number => fs.lstatSync(p).mode & 0o777

/** Copies a directory tree to `to`, links copied as links (never followed). */
export const copyDir = (from: string, to: string): void => {
  fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true })
}
