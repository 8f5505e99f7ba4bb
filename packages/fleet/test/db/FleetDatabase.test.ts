/**
 * Fleet connection strings: a user name, password or database name that is not valid
 * percent-encoding is an `InvalidFleetDatabaseUrl` (never a `URIError` from the driver), its
 * reason never repeats the string, and a failure message never carries the password.
 */
import { assert, describe, it } from "@effect/vitest"
import { fleetErrorMessage, parseFleetUrl } from "@logbook/fleet"
import { Effect, Exit } from "effect"

describe("parseFleetUrl", () => {
  it.effect("a bad percent-encoding in the user, password or database is an invalid URL naming the part", () =>
    Effect.gen(function*() {
      for (
        const [url, part] of [
          ["postgres://u:pa%zzss@db.example:5432/fleet", "password"],
          ["postgres://u%E0%A4:pw@db.example/fleet", "user name"],
          ["postgres://u@db.example/fl%zzeet", "database name"]
        ] as const
      ) {
        const exit = yield* Effect.exit(parseFleetUrl("test", url))
        assert.isTrue(Exit.isFailure(exit), url)
        const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
        const failure = error?._tag === "Fail" ? error.error : undefined
        assert.strictEqual(failure?._tag, "InvalidFleetDatabaseUrl")
        assert.include(failure?.reason ?? "", `the ${part} is not valid percent-encoding`)
        assert.notInclude(failure?.reason ?? "", "zz")
      }
    }))

  it.effect("a valid percent-encoded password is accepted and scrubbed from failure messages", () =>
    Effect.gen(function*() {
      const target = yield* parseFleetUrl("test", "postgres://u:p%40ss%25w@db.example/fleet")
      assert.strictEqual(target.display, "db.example:5432/fleet")
      assert.strictEqual(fleetErrorMessage(target, new Error("auth failed for p@ss%w")), "auth failed for ***")
    }))
})
