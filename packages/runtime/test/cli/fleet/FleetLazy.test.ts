/**
 * The PostgreSQL driver is loaded only when a fleet command runs: the CLI modules that import
 * `@logbook/fleet` (or the driver) as a value (`FleetQueries.ts`, the handlers of the other fleet
 * commands) are reached only through a dynamic `import()`, so `logbook show` never loads them.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

const src = path.join(import.meta.dirname, "..", "..", "..", "src")

const modules = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? modules(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []
  )

/** Static value imports (`import … from "x"`, not `import type`) of a module's source. */
const valueImports = (text: string): Array<string> =>
  [...text.matchAll(/^import (?!type )[^;]*?from "([^"]+)"/gmu)].map((m) => m[1] ?? "")

describe("fleet commands load lazily", () => {
  it("the modules that import the fleet package are only ever imported dynamically", () => {
    const sources = new Map(modules(src).map((file) => [path.relative(src, file), fs.readFileSync(file, "utf8")]))
    const loaders = [...sources].filter(([, text]) =>
      valueImports(text).some((i) => i === "@logbook/fleet" || i.startsWith("@effect/sql-pg"))
    ).map(([name]) => name)
    assert.include(loaders, path.join("cli", "fleet", "FleetQueries.ts"))
    for (const loader of loaders) {
      const specifier = `./${path.basename(loader)}`
      // The fleet commands, and the fleet readers of the MCP server and the web app (`--db`).
      assert.include(
        [path.join("cli", "fleet"), "mcp", "serve"],
        path.dirname(loader),
        `${loader} loads the fleet package outside cli/fleet/, mcp/ and serve/`
      )
      for (const [name, text] of sources) {
        assert.notInclude(valueImports(text), specifier, `${name} imports ${loader} statically`)
      }
      assert.isTrue(
        [...sources.values()].some((text) => text.includes(`import("${specifier}")`)),
        `nothing imports ${loader} dynamically`
      )
    }
  })
})
