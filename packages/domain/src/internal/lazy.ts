/**
 * Values built on first use. Deriving a codec from a large schema (an encoder walks and flips
 * the whole schema) takes milliseconds; at module level every `logbook` start would pay for
 * codecs most commands never use.
 */

/** `make()` on the first call, the same value on every later call. */
export const lazy = <A>(make: () => A): () => A => {
  let built: { readonly value: A } | undefined
  return () => (built ??= { value: make() }).value
}
