import { assert, describe, it } from "@effect/vitest"
import { decodeManifestText } from "@logbook/domain"
import { Effect, Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { plantSession } from "../src/PlantedSession.ts"
import { tempDir } from "../src/TempDir.ts"

describe("plantSession", () => {
  it.effect("writes a manifest the store can decode, the exact log bytes and a pin, all private", () =>
    Effect.scoped(Effect.gen(function*() {
      const root = yield* tempDir("testkit-plant")
      const dir = plantSession(root, "s1", { manifest: { turn_count: 4 }, events: "torn", pinned: true })
      const manifest = decodeManifestText(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"))
      assert.isTrue(Result.isSuccess(manifest))
      if (Result.isSuccess(manifest)) assert.strictEqual(manifest.success.turn_count, 4)
      assert.strictEqual(fs.readFileSync(path.join(dir, "events.jsonl"), "utf8"), "torn")
      assert.isTrue(fs.existsSync(path.join(dir, "retention-pin.json")))
      assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700)
      assert.strictEqual(fs.statSync(path.join(dir, "manifest.json")).mode & 0o777, 0o600)
    })))
})
