/**
 * Memory views planted as an external writer (a host, another process) would write them, for the
 * search and facts tests of every package.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Writes `<root>/<name>/derived/memory.json` with these grounded facts (`null`: an entry without
 * text) and, when given, `created_at` and the file's mtime.
 */
export const plantView = (
  root: string,
  name: string,
  facts: ReadonlyArray<string | null>,
  createdAt?: number,
  mtime?: number
): void => {
  const dir = path.join(root, name, "derived")
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, "memory.json")
  fs.writeFileSync(
    file,
    JSON.stringify({
      summary: "s",
      grounded_facts: facts.map((fact) => (fact === null ? { source: "x" } : { fact, source: "x" })),
      ...(createdAt === undefined ? {} : { created_at: createdAt })
    })
  )
  if (mtime !== undefined) fs.utimesSync(file, mtime, mtime)
}
