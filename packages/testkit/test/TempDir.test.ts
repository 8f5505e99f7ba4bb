import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { tempDir, tempWorkspace } from "../src/TempDir.ts"

describe("tempDir", () => {
  it.effect("removes the directory and everything in it when the scope closes", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.scoped(Effect.tap(tempDir("testkit"), (d) =>
        Effect.sync(() => {
          fs.mkdirSync(path.join(d, "a", "b"), { recursive: true })
          fs.writeFileSync(path.join(d, "a", "b", "f"), "x")
        })))
      assert.isFalse(fs.existsSync(dir))
    }))

  it.effect("removes the directory also when the test body fails", () =>
    Effect.gen(function*() {
      let seen = ""
      const exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
        seen = yield* tempDir("testkit-fail", { fast: true })
        return yield* Effect.fail("boom")
      })))
      assert.isTrue(Exit.isFailure(exit))
      assert.notStrictEqual(seen, "")
      assert.isFalse(fs.existsSync(seen))
    }))

  it.effect("a workspace has its subdirectories and the default sessions root below it", () =>
    Effect.scoped(Effect.gen(function*() {
      const ws = yield* tempWorkspace("testkit-ws", { dirs: ["src"] })
      assert.isTrue(fs.statSync(path.join(ws.root, "src")).isDirectory())
      assert.strictEqual(ws.sessions, path.join(ws.root, ".logbook", "sessions"))
      assert.strictEqual(fs.realpathSync(ws.root), ws.root)
    })))
})
