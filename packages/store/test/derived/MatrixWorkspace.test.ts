import { assert, describe, it } from "@effect/vitest"
import type { MatrixSpec, MatrixTaskSpec } from "@logbook/domain"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { validateWorkspace } from "../../src/derived/MatrixWorkspace.ts"
import { SessionFs } from "../../src/fs/SessionFs.ts"

/** A workspace root with `src/` (holding `a.ts`) and `docs/`, plus a sibling directory outside it. */
const makeFixture = (base: string) => {
  const root = path.join(base, "root")
  const outside = path.join(base, "outside")
  fs.mkdirSync(path.join(root, "src"), { recursive: true })
  fs.mkdirSync(path.join(root, "docs"))
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(root, "src", "a.ts"), "export {}\n")
  fs.writeFileSync(path.join(outside, "secret.txt"), "secret\n")
  return { base, root, outside }
}

/** The fixture for the current test's scope, removed when the test ends. */
const fixture = () => Effect.map(tempDir("matrix-ws"), makeFixture)

const task = (overrides: Partial<MatrixTaskSpec> = {}): MatrixTaskSpec => ({
  id: "repair",
  instructions: "fix the build",
  dependencies: [],
  workspace: "src",
  access: "read",
  checks: ["npm test"],
  resources: {},
  timeout_secs: 60,
  replay_safe: false,
  inputs: [],
  ...overrides
})

const spec = (...tasks: ReadonlyArray<MatrixTaskSpec>): MatrixSpec => ({ id: "m", tasks, resources: {} })

/** The MatrixError message of a failed validation (fails the test on success or another error). */
const rejection = (s: MatrixSpec, root: string) =>
  validateWorkspace(s, root).pipe(
    Effect.flip,
    Effect.map((error) => {
      assert.strictEqual(error._tag, "MatrixError")
      return error.message
    })
  )

describe("MatrixWorkspace.validateWorkspace", () => {
  it.effect("accepts workspaces that are directories and inputs that are regular files inside the root", () =>
    Effect.gen(function*() {
      const { root } = yield* fixture()
      fs.mkdirSync(path.join(root, "src", "nested"))
      yield* validateWorkspace(
        spec(
          task({ inputs: ["a.ts", "./a.ts"] }),
          task({ id: "docs", workspace: "docs" }),
          task({ id: "nested", workspace: "src/./nested" })
        ),
        root
      )
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("canonicalises a root reached through a symlink and accepts links that stay inside it", () =>
    Effect.gen(function*() {
      const { base, root } = yield* fixture()
      const rootLink = path.join(base, "root-link")
      fs.symlinkSync(root, rootLink)
      fs.symlinkSync(path.join(root, "src"), path.join(root, "src-link"))
      fs.symlinkSync(path.join(root, "src", "a.ts"), path.join(root, "docs", "a-link.ts"))
      yield* validateWorkspace(
        spec(
          task({ workspace: "src-link", inputs: ["a.ts"] }),
          task({ id: "d", workspace: "docs", inputs: ["a-link.ts"] })
        ),
        rootLink
      )
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("rejects a symlinked workspace that escapes the root", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* fixture()
      fs.symlinkSync(outside, path.join(root, "escape"))
      const message = yield* rejection(spec(task({ workspace: "escape" })), root)
      assert.strictEqual(message, `task "repair" workspace "escape" resolves outside the workspace root`)
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("rejects a workspace below a symlinked ancestor that escapes the root", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* fixture()
      fs.mkdirSync(path.join(outside, "deep"))
      fs.symlinkSync(outside, path.join(root, "src", "up"))
      const message = yield* rejection(spec(task({ workspace: "src/up/deep" })), root)
      assert.include(message, "resolves outside the workspace root")
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("rejects an input symlink, direct or through a directory link, that escapes the root", () =>
    Effect.gen(function*() {
      const { outside, root } = yield* fixture()
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "src", "secret.txt"))
      fs.symlinkSync(outside, path.join(root, "src", "out"))
      assert.strictEqual(
        yield* rejection(spec(task({ inputs: ["a.ts", "secret.txt"] })), root),
        `task "repair" input "secret.txt" resolves outside the workspace root`
      )
      assert.strictEqual(
        yield* rejection(spec(task({ inputs: ["out/secret.txt"] })), root),
        `task "repair" input "out/secret.txt" resolves outside the workspace root`
      )
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("rejects a workspace that is a file or missing, and an input that is a directory or missing", () =>
    Effect.gen(function*() {
      const { root } = yield* fixture()
      fs.writeFileSync(path.join(root, "file.txt"), "x")
      assert.strictEqual(
        yield* rejection(spec(task({ workspace: "file.txt" })), root),
        `task "repair" workspace "file.txt" is not a directory`
      )
      assert.strictEqual(
        yield* rejection(spec(task({ workspace: "nowhere" })), root),
        `task "repair" workspace "nowhere" does not exist (ENOENT)`
      )
      assert.strictEqual(
        yield* rejection(spec(task({ workspace: ".", inputs: ["src"] })), root),
        `task "repair" input "src" is not a regular file`
      )
      assert.strictEqual(
        yield* rejection(spec(task({ inputs: ["missing.ts"] })), root),
        `task "repair" input "missing.ts" does not exist (ENOENT)`
      )
      assert.strictEqual(
        yield* rejection(spec(task({ inputs: ["a.ts/deeper"] })), root),
        `task "repair" input "a.ts/deeper" does not exist (ENOTDIR)`
      )
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("rejects a dangling or looping link as missing rather than following it", () =>
    Effect.gen(function*() {
      const { root } = yield* fixture()
      fs.symlinkSync(path.join(root, "gone"), path.join(root, "src", "dangling.ts"))
      fs.symlinkSync(path.join(root, "loop-b"), path.join(root, "loop-a"))
      fs.symlinkSync(path.join(root, "loop-a"), path.join(root, "loop-b"))
      assert.include(yield* rejection(spec(task({ inputs: ["dangling.ts"] })), root), "does not exist (ENOENT)")
      assert.include(yield* rejection(spec(task({ workspace: "loop-a" })), root), "does not exist (ELOOP)")
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("rejects unsafe relative paths before touching the file system, and a root that is not a directory", () =>
    Effect.gen(function*() {
      const { root } = yield* fixture()
      assert.include(yield* rejection(spec(task({ workspace: "../outside" })), root), "workspace must be a relative")
      assert.include(yield* rejection(spec(task({ workspace: "/etc" })), root), "workspace must be a relative")
      assert.include(yield* rejection(spec(task({ inputs: ["../../etc/passwd"] })), root), "input must be a relative")
      assert.strictEqual(
        yield* rejection(spec(task()), path.join(root, "src", "a.ts")),
        `workspace root "${path.join(root, "src", "a.ts")}" is not a directory`
      )
      assert.include(yield* rejection(spec(task()), path.join(root, "absent")), "does not exist (ENOENT)")
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("reports other file-system failures as StoreIoError, not as a spec problem", () =>
    Effect.gen(function*() {
      const { root } = yield* fixture()
      const error = yield* Effect.flip(validateWorkspace(spec(task()), root))
      assert.strictEqual(error._tag, "StoreIoError")
      if (error._tag === "StoreIoError") {
        assert.strictEqual(error.code, "EIO")
        assert.strictEqual(error.operation, "realPath")
      }
    }).pipe(Effect.provide(SessionFs.layerFaulty([{ _tag: "Fail", call: 0, code: "EIO", op: "realpath" }]))))
})
