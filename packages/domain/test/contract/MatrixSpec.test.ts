/**
 * Spec decoding and validation (docs/matrix.md#spec): the reference fixture, every
 * validation rule, long dependency chains and the relative-path helper.
 */
import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { MATRIX_U32_MAX, MatrixSpec, MatrixTaskSpec } from "../../src/contract/MatrixSpec.ts"
import type { MatrixSpec as MatrixSpecType } from "../../src/contract/MatrixSpec.ts"
import * as Matrix from "../../src/matrix/Matrix.ts"
import { errorOf, FIXTURE_SPEC_JSON, fixtureSpec, ok, spec, task } from "../matrix/MatrixTestkit.ts"

const invalid = (s: MatrixSpecType): string => errorOf(Matrix.validateSpec(s))

describe("MatrixSpec", () => {
  it("decodes the reference fixture's spec and validates it", () => {
    const decoded = Schema.decodeUnknownSync(MatrixSpec)(JSON.parse(FIXTURE_SPEC_JSON))
    assert.strictEqual(ok(Matrix.validateSpec(decoded)), decoded)
    assert.deepStrictEqual(decoded.resources, { "cargo-target": 1, device: 1 })
    const ui = decoded.tasks[1]
    assert.isDefined(ui)
    assert.strictEqual(ui?.replay_safe, false)
    assert.deepStrictEqual(ui?.inputs, [])
    assert.deepStrictEqual(ui?.dependencies, ["repair"])
  })

  it("fills the documented defaults for a minimal task and writes every field back in declaration order", () => {
    const minimal = { id: "t", instructions: "i", workspace: ".", access: "read", checks: ["c"], timeout_secs: 1 }
    const decoded = Schema.decodeUnknownSync(MatrixTaskSpec)(minimal)
    assert.deepStrictEqual(decoded, task("t", { instructions: "i", checks: ["c"], timeout_secs: 1 }))
    assert.strictEqual(
      JSON.stringify(Schema.encodeSync(MatrixTaskSpec)(decoded)),
      `{"id":"t","instructions":"i","dependencies":[],"workspace":".","access":"read","checks":["c"],"resources":{},` +
        `"timeout_secs":1,"replay_safe":false,"inputs":[]}`
    )
    const bare = Schema.decodeUnknownSync(MatrixSpec)({ id: "m", tasks: [minimal] })
    assert.deepStrictEqual(bare.resources, {})
  })

  it("rejects capacities and quantities outside u32 at decoding", () => {
    const decode = Schema.decodeUnknownResult(MatrixSpec)
    assert.isTrue(Result.isSuccess(decode({ id: "m", tasks: [], resources: { p: MATRIX_U32_MAX } })))
    assert.isTrue(Result.isFailure(decode({ id: "m", tasks: [], resources: { p: MATRIX_U32_MAX + 1 } })))
    assert.isTrue(Result.isFailure(decode({ id: "m", tasks: [], resources: { p: -1 } })))
    assert.isTrue(Result.isFailure(decode({ id: "m", tasks: [], resources: { p: 1.5 } })))
  })

  it("requires a non-blank id and at least one task", () => {
    assert.strictEqual(invalid({ ...fixtureSpec, id: "  " }), "matrix needs an ID and tasks")
    assert.strictEqual(invalid({ ...fixtureSpec, tasks: [] }), "matrix needs an ID and tasks")
  })

  it("requires every pool to have a non-blank name and a positive capacity", () => {
    assert.match(invalid(spec([task("a")], { "": 1 })), /resource pool "" needs a non-blank name/)
    assert.match(invalid(spec([task("a")], { gpu: 0 })), /resource pool "gpu" needs .* capacity from 1/)
    assert.match(invalid(spec([task("a")], { gpu: 1.5 })), /resource pool "gpu"/)
  })

  it("requires unique non-blank task ids", () => {
    assert.strictEqual(invalid(spec([task("a"), task(" ")])), "task IDs must be non-blank")
    assert.strictEqual(invalid(spec([task("a"), task("a")])), `duplicate task ID "a"`)
  })

  it("requires instructions, a positive timeout and at least one non-blank check", () => {
    assert.strictEqual(invalid(spec([task("a", { instructions: "\t" })])), `task "a" needs non-blank instructions`)
    assert.strictEqual(invalid(spec([task("a", { timeout_secs: 0 })])), `task "a" needs a positive timeout_secs`)
    assert.strictEqual(invalid(spec([task("a", { checks: [] })])), `task "a" needs at least one check`)
    assert.strictEqual(invalid(spec([task("a", { checks: ["ok", " "] })])), `task "a" has a blank check`)
  })

  it("rejects workspaces and inputs that are empty, absolute or climb with ..", () => {
    for (const workspace of ["", "..", "a/../b", "/tmp", "\\share", "C:\\work", "a\\..\\b"]) {
      assert.match(invalid(spec([task("a", { workspace })])), /workspace .* must be a non-empty relative path/)
    }
    assert.match(invalid(spec([task("a", { inputs: ["ok.txt", "../secret"] })])), /input "..\/secret" must be/)
    assert.match(invalid(spec([task("a", { inputs: ["/etc/passwd"] })])), /input "\/etc\/passwd" must be/)
    ok(Matrix.validateSpec(spec([task("a", { workspace: "./pkg//sub/", inputs: ["./x/y.json", "z..y"] })])))
  })

  it("requires dependencies to be known and listed once", () => {
    assert.strictEqual(invalid(spec([task("a", { dependencies: ["b"] })])), `task "a" depends on unknown task "b"`)
    assert.strictEqual(
      invalid(spec([task("a"), task("b", { dependencies: ["a", "a"] })])),
      `task "b" lists dependency "a" more than once`
    )
  })

  it("requires task resources to name a known pool with a positive quantity within its capacity", () => {
    assert.strictEqual(
      invalid(spec([task("a", { resources: { gpu: 1 } })], { cpu: 2 })),
      `task "a" requires unknown resource pool "gpu"`
    )
    assert.strictEqual(
      invalid(spec([task("a", { resources: { toString: 1 } })])),
      `task "a" requires unknown resource pool "toString"`
    )
    assert.strictEqual(
      invalid(spec([task("a", { resources: { cpu: 0 } })], { cpu: 2 })),
      `task "a" needs a positive quantity of "cpu"`
    )
    assert.strictEqual(
      invalid(spec([task("a", { resources: { cpu: 3 } })], { cpu: 2 })),
      `task "a" needs more "cpu" than the pool's capacity 2`
    )
    ok(Matrix.validateSpec(spec([task("a", { resources: { cpu: MATRIX_U32_MAX } })], { cpu: MATRIX_U32_MAX })))
  })

  it("detects self-dependencies and short cycles", () => {
    assert.strictEqual(invalid(spec([task("a", { dependencies: ["a"] })])), "dependency cycle")
    assert.strictEqual(
      invalid(spec([task("a", { dependencies: ["b"] }), task("b", { dependencies: ["a"] }), task("c")])),
      "dependency cycle"
    )
  })

  it("handles a 20 000-task chain declared backwards, and the same chain closed into a cycle, without recursion", () => {
    const n = 20_000
    const chain = Array.from({ length: n }, (_, i) => task(`t${i}`, { dependencies: i + 1 < n ? [`t${i + 1}`] : [] }))
    ok(Matrix.validateSpec(spec(chain)))
    const closed = chain.map((t, i) => i === n - 1 ? { ...t, dependencies: ["t0"] } : t)
    assert.strictEqual(invalid(spec(closed)), "dependency cycle")
  })

  it("creates a matrix only from a valid spec", () => {
    assert.strictEqual(errorOf(Matrix.create({ ...fixtureSpec, id: "" })), "matrix needs an ID and tasks")
    const { snapshot } = ok(Matrix.create(fixtureSpec))
    assert.deepStrictEqual(snapshot, {
      spec: fixtureSpec,
      lifecycle: "created",
      tasks: [
        { id: "repair", status: "queued", attempts: [], automatic_retries: 0 },
        { id: "ui-checks", status: "queued", attempts: [], automatic_retries: 0 }
      ],
      generation: null,
      revision: 0
    })
  })
})

describe("isSafeRelativePath", () => {
  it("accepts relative paths made of normal and . components", () => {
    for (const p of [".", "./", "a", "a/b/c.txt", "./a/./b", "a//b", "..a", "a..", " "]) {
      assert.isTrue(Matrix.isSafeRelativePath(p), p)
    }
  })

  it("rejects empty, rooted, drive-prefixed, parent-climbing and NUL-containing paths", () => {
    for (const p of ["", "/", "/a", "\\a", "C:", "c:/x", "..", "../a", "a/..", "a/../b", "a\\..", "a\0b"]) {
      assert.isFalse(Matrix.isSafeRelativePath(p), JSON.stringify(p))
    }
  })
})
