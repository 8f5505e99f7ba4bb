/**
 * The one no-follow walk: regular files through real directories only — links (to files or
 * directories) and FIFOs are neither reported nor entered, and the filter sees every kept entry.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempWorkspace } from "@logbook/testkit"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { regularFilesBelow } from "../../src/fs/RegularFiles.ts"
import { SessionFs } from "../../src/fs/SessionFs.ts"

describe("regularFilesBelow", () => {
  it.effect("reports regular files below real directories and never a link or a FIFO", () =>
    Effect.gen(function*() {
      const ws = yield* tempWorkspace("regular-files")
      const dir = path.join(ws.root, "tree")
      const outside = path.join(ws.root, "outside")
      fs.mkdirSync(path.join(dir, "a", "b"), { recursive: true })
      fs.mkdirSync(outside)
      fs.writeFileSync(path.join(outside, "secret.txt"), "not yours")
      fs.writeFileSync(path.join(dir, "top.txt"), "1")
      fs.writeFileSync(path.join(dir, "a", "b", "deep.txt"), "22")
      fs.symlinkSync(outside, path.join(dir, "a", "linked-dir"))
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "linked-file.txt"))
      execFileSync("mkfifo", [path.join(dir, "a", "pipe")])
      const fsApi = yield* SessionFs
      const all = yield* regularFilesBelow(fsApi, dir)
      assert.deepStrictEqual(all.map((f) => f.relative).sort(), ["a/b/deep.txt", "top.txt"])
      assert.deepStrictEqual(all.map((f) => f.info.size).sort(), [1, 2])
      const seen: Array<string> = []
      const filtered = yield* regularFilesBelow(fsApi, dir, (relative, _, type) => {
        seen.push(`${type}:${relative}`)
        return relative !== "a"
      })
      assert.deepStrictEqual(filtered.map((f) => f.relative), ["top.txt"])
      assert.notInclude(seen.join(" "), "linked")
      assert.notInclude(seen.join(" "), "pipe")
    }).pipe(Effect.provide(SessionFs.layerNode)))
})
