/**
 * `checkedAbsolute` returns what `path.resolve` does for every path without a `..` component
 * (paths already absolute and normal are returned as they are, without resolving them again).
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { resolve } from "node:path"
import { checkedAbsolute } from "../../../src/fs/internal/fsPath.ts"

const Piece = Schema.Literals(["/", "a", "b.c", ".", "..x", "x..", "//", "\\", " ", "é"])

describe("checkedAbsolute", () => {
  it.prop(
    "equals path.resolve for every path without a '..' component",
    [Schema.Array(Piece).check(Schema.isMinLength(1), Schema.isMaxLength(12))],
    ([pieces]) => {
      const path = pieces.join("")
      if (path.split(/[\\/]/).includes("..")) return
      assert.strictEqual(checkedAbsolute(path), resolve(path))
    },
    { arbitrary: { runs: 500 } }
  )

  it("refuses a '..' component and an empty path", () => {
    assert.throws(() => checkedAbsolute("/a/../b"))
    assert.throws(() => checkedAbsolute(""))
    assert.strictEqual(checkedAbsolute("/a/b..c/d"), "/a/b..c/d")
  })
})
