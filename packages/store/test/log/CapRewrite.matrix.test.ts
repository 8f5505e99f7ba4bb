import { assert, describe, it } from "@effect/vitest"
import { encodeLine } from "@logbook/domain"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as EventLog from "../../src/log/EventLog.ts"
import {
  assertSessionConsistent,
  labelledTurn,
  matrixUpdated,
  recordingHook,
  storeLayer,
  tempRoot
} from "../fixtures/capTestkit.ts"

/** A matrix.updated record whose envelope and type are valid but whose snapshot does not decode. */
const UNDECODABLE = "{\"schema_version\":\"0.18.0\",\"event\":{\"type\":\"matrix.updated\",\"spec\":{\"id\":7}}}"

describe("cap rewrites and undecodable matrix records", () => {
  it.effect("an undecodable matrix record in an evicted turn is kept at the head of the rewritten log (replay keeps failing closed)", () =>
    Effect.gen(function*() {
      const root = yield* tempRoot("cap-poison")
      const dir = path.join(root, "p")
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
      // Turn 1 carries the undecodable record and a valid checkpoint of matrix m1.
      const [start, ...rest] = labelledTurn(1, 2)
      const seeded = [
        start === undefined ? "" : encodeLine(start),
        UNDECODABLE,
        encodeLine(matrixUpdated("m1", 1)),
        ...rest.map(encodeLine)
      ].join("\n") + "\n"
      fs.writeFileSync(path.join(dir, "events.jsonl"), seeded)
      const { hook, ranges } = recordingHook()
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* EventLog.open({
          sessionsDir: root,
          sessionId: "p",
          maxEvents: 12,
          maxBytes: 0,
          summaryHook: hook
        })
        for (let turn = 2; turn <= 5; turn++) for (const e of labelledTurn(turn, 2)) yield* log.append(e)
        assert.isAbove(ranges.length, 0, "a rewrite happened")
        assert.isAbove((yield* log.manifest).retained_turn_base ?? 1, 1)
        yield* assertSessionConsistent(log, "after the rewrite")
      }))
      const lines = fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").split("\n")
      assert.strictEqual(lines[0], UNDECODABLE, "the undecodable record leads the rewritten log")
      assert.include(lines[1] ?? "", "\"id\":\"m1\"", "then the newest checkpoint of m1")
    }).pipe(Effect.provide(storeLayer)))
})
