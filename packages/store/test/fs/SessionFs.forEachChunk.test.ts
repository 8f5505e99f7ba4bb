/**
 * `SessionFs.forEachChunk`, the cheap whole-file read behind audit-pack digests: every byte in
 * order in chunks of the asked size (across the batches in which it yields), an empty file, and
 * links and missing files refused rather than followed.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SessionFs } from "../../src/fs/SessionFs.ts"

const collect = (file: string, chunkSize: number) =>
  Effect.gen(function*() {
    const sessionFs = yield* SessionFs
    const sizes: Array<number> = []
    const parts: Array<Buffer> = []
    const total = yield* sessionFs.forEachChunk(file, chunkSize, (chunk) => {
      sizes.push(chunk.length)
      parts.push(Buffer.from(chunk))
    })
    return { total, sizes, data: Buffer.concat(parts) }
  })

describe("SessionFs.forEachChunk", () => {
  it.effect("hands every byte over in order, in chunks of the asked size, past many yield points", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("fs-chunks")
      const file = path.join(dir, "data.bin")
      // 200 chunks of 1 KiB plus a 7-byte tail: more than three batches of 64 chunks.
      const data = Buffer.from(Array.from({ length: 200 * 1024 + 7 }, (_, i) => (i * 31 + 7) & 0xff))
      fs.writeFileSync(file, data)
      const read = yield* collect(file, 1024)
      assert.strictEqual(read.total, data.length)
      assert.isTrue(read.data.equals(data))
      assert.strictEqual(read.sizes.length, 201)
      assert.deepStrictEqual(read.sizes.at(-1), 7)
      assert.isTrue(read.sizes.slice(0, 200).every((n) => n === 1024))
      fs.writeFileSync(file, data.subarray(0, 4096))
      const exact = yield* collect(file, 1024)
      assert.deepStrictEqual(exact.sizes, [1024, 1024, 1024, 1024])
      fs.writeFileSync(file, "")
      assert.deepStrictEqual(yield* collect(file, 1024), { total: 0, sizes: [], data: Buffer.alloc(0) })
    }).pipe(Effect.provide(SessionFs.layerNode)))

  it.effect("refuses a symbolic link (ELOOP) and reports a missing file (ENOENT)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("fs-chunks")
      fs.writeFileSync(path.join(dir, "target"), "secret")
      fs.symlinkSync(path.join(dir, "target"), path.join(dir, "link"))
      const link = yield* Effect.flip(collect(path.join(dir, "link"), 64))
      assert.strictEqual(link.code, "ELOOP")
      const missing = yield* Effect.flip(collect(path.join(dir, "nope"), 64))
      assert.strictEqual(missing.code, "ENOENT")
    }).pipe(Effect.provide(SessionFs.layerNode)))
})
