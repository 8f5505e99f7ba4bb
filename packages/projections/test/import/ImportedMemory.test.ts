/**
 * The memory view an import folds while it appends a new session's events is the view derived
 * from the written log: on every real JSONL fixture (and the hand-written ones), re-deriving it
 * from the log afterwards finds the stored view already the same. A session imported before is
 * read back instead (its view covers the events of every import).
 */
import { assert, describe, it } from "@effect/vitest"
import { SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { tempDir } from "@logbook/testkit"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { importSessions } from "../../src/import/Importer.ts"
import { deriveSessionMemory } from "../../src/memory/MemoryDerivation.ts"

const fixtures = path.join(import.meta.dirname, "..", "fixtures")
const jsonlBelow = (dir: string): Array<string> =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl")).sort().map((f) =>
    path.join(dir, f)
  )
const sources = [...jsonlBelow(path.join(fixtures, "realdata")), ...jsonlBelow(path.join(fixtures, "handwritten"))]

const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)

describe("The memory view folded during an import", () => {
  for (const file of sources) {
    it.effect(`${path.basename(file)}: equals the view derived from the written log`, () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("import-memory")
        yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
        const report = yield* importSessions({ sessionsDir: dir, format: "auto", paths: [file] }).pipe(
          Effect.provide(storeLayer)
        )
        const source = report.sources[0]
        if (source?.status !== "created" || source.session === undefined) return
        assert.strictEqual(source.memory, "written")
        const stored = fs.readFileSync(path.join(sessionPaths(dir, source.session).derivedDir, "memory.json"))
        const again = yield* deriveSessionMemory(dir, source.session).pipe(Effect.provide(storeLayer))
        assert.isFalse(again.written, "the log gives another view than the import folded")
        assert.deepStrictEqual(
          fs.readFileSync(path.join(sessionPaths(dir, source.session).derivedDir, "memory.json")),
          stored
        )
      }))
  }
})
