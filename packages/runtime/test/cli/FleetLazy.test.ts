/**
 * The PostgreSQL driver is loaded only when a fleet command runs: no module of the CLI imports
 * `@logbook/fleet` (or the driver) as a value except `FleetQueries.ts`, and that module is reached
 * only through a dynamic `import()`, so `logbook show` and the other local commands never load it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const src = path.join(import.meta.dirname, "..", "..", "src")

const modules = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? modules(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []
  )

/** Static value imports (`import … from "x"`, not `import type`) of a module's source. */
const valueImports = (text: string): Array<string> =>
  [...text.matchAll(/^import (?!type )[^;]*?from "([^"]+)"/gmu)].map((m) => m[1] ?? "")

describe("fleet commands load lazily", () => {
  it("only FleetQueries.ts imports the fleet package, and only dynamically is it imported", () => {
    const files = modules(src)
    const loaders: Array<string> = []
    for (const file of files) {
      const text = fs.readFileSync(file, "utf8")
      const imports = valueImports(text)
      const name = path.relative(src, file)
      if (imports.some((i) => i === "@logbook/fleet" || i.startsWith("@effect/sql-pg"))) loaders.push(name)
      assert.notInclude(imports, "./FleetQueries.ts", `${name} imports FleetQueries.ts statically`)
    }
    assert.deepStrictEqual(loaders, [path.join("cli", "FleetQueries.ts")])
    const fleet = fs.readFileSync(path.join(src, "cli", "Fleet.ts"), "utf8")
    assert.include(fleet, "import(\"./FleetQueries.ts\")")
  })
})
