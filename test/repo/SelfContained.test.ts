/**
 * Keeps the repository self-contained: nothing it ships or tests may read or link the reference
 * folder that sits beside some clones, and comments cite `docs/` rather than documents that are
 * not in the repository. Runs in `npm test` as the `repo` project; it only reads text files.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))
const scanned = ["packages", "bench", "examples", "test", "docs", "README.md"]
const skippedDirs = new Set(["node_modules", "dist", ".tsbuild", "coverage", ".logbook"])
const textFile = /\.(?:ts|mts|cts|js|mjs|cjs|json|md|jsonl|txt|yml|yaml|sh)$/

// Built from pieces so this file does not match its own patterns.
const outsideFolder = new RegExp(["\\.\\.", "shared"].join("/"))
const uncheckedCitation = new RegExp(["(?:spec|DESIGN)", "§"].join(" "), "i")

const filesUnder = (path: string): Array<string> => {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (stat === undefined) return []
  if (stat.isFile()) return textFile.test(path) ? [path] : []
  if (!stat.isDirectory()) return []
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => !(entry.isDirectory() && skippedDirs.has(entry.name)) && !entry.isSymbolicLink())
    .flatMap((entry) => filesUnder(join(path, entry.name)))
}

/** Every `file:line: text` of the scanned files whose line matches `pattern`. */
const linesMatching = (pattern: RegExp): Array<string> => {
  const files = scanned.flatMap((name) => filesUnder(join(root, name)))
  assert.isAbove(files.length, 100, "the scan found the repository's files")
  return files.flatMap((file) =>
    readFileSync(file, "utf8").split("\n").flatMap((line, index) =>
      pattern.test(line) ? [`${relative(root, file)}:${index + 1}: ${line.trim()}`] : []
    )
  )
}

/** The anchors a Markdown file offers: explicit `<a id>` targets and GitHub-style heading slugs. */
const anchorsOf = (markdown: string): Set<string> => {
  const ids = [...markdown.matchAll(/<a id="([^"]+)"/g)].map((m) => m[1] ?? "")
  const slugs = [...markdown.matchAll(/^#+ (.+)$/gm)].map((m) =>
    (m[1] ?? "").toLowerCase().replace(/[^a-z0-9 _-]/g, "").replace(/ /g, "-")
  )
  return new Set([...ids, ...slugs])
}

describe("the repository", () => {
  it("never reads or links the reference folder that sits outside some clones", () => {
    assert.deepStrictEqual(linesMatching(outsideFolder), [])
  })

  it("links only to docs/ files and anchors that exist", () => {
    const link = /\bdocs\/([A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?/g
    // Fixture provenance quotes other repositories' paths (e.g. a `docs/…` file of the source).
    const hits = linesMatching(link).filter((hit) => !hit.startsWith("test/fixtures/"))
    const broken = hits.flatMap((hit) =>
      [...hit.matchAll(link)].flatMap(([whole, file, anchor]) => {
        const path = join(root, "docs", file ?? "")
        if (statSync(path, { throwIfNoEntry: false }) === undefined) return [`${hit} → ${whole}: no such file`]
        return anchor === undefined || anchorsOf(readFileSync(path, "utf8")).has(anchor) ? [] : [`${hit} → ${whole}`]
      })
    )
    assert.deepStrictEqual(broken, [])
  })

  it("cites its own docs/ rather than documents it does not contain", () => {
    assert.deepStrictEqual(linesMatching(uncheckedCitation), [])
  })
})
