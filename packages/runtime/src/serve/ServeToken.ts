/**
 * The per-run access token of `logbook serve`: a random secret printed with the URL (like a
 * notebook server), without which every request is refused. Generated through a service so tests
 * fix it and library code never calls a random source directly.
 */
import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"

/** Generates the token of one server run. */
export class ServeToken extends Context.Service<ServeToken, {
  /** A fresh token: URL-safe, at least 128 bits of entropy. */
  readonly generate: Effect.Effect<string>
}>()("@logbook/runtime/serve/ServeToken") {
  /** 32 bytes from the operating system's CSPRNG, base64url (43 characters). */
  static readonly layerRandom: Layer.Layer<ServeToken> = Layer.succeed(ServeToken, {
    generate: Effect.sync(() => randomBytes(32).toString("base64url"))
  })

  /** Always `token` (tests). */
  static readonly layerFixed = (token: string): Layer.Layer<ServeToken> =>
    Layer.succeed(ServeToken, { generate: Effect.succeed(token) })
}

/**
 * Whether `given` equals `expected`, in time that depends only on their lengths (a token is
 * compared without telling an attacker how many leading characters were right).
 */
export const tokenMatches = (given: string, expected: string): boolean => {
  if (given.length !== expected.length || expected.length === 0) return false
  let diff = 0
  for (let i = 0; i < expected.length; i++) diff |= given.charCodeAt(i) ^ expected.charCodeAt(i)
  return diff === 0
}
