/**
 * Field-level codecs shared by the ThreadEvent and ThreadItem schemas. Each one encodes a
 * serde rule of the reference contract (docs/format.md#canonical-encoding) so the wire stays byte-compatible:
 * `Option<T>` fields omitted when absent (and `null` read as absent), `Option<T>` fields
 * written as `null`, `#[serde(default)]` fields always written, `#[serde(other)]` enums
 * that read any other string as `unknown`, and null-tolerant counters.
 */
import { Effect, Option, Schema, SchemaTransformation } from "effect"

/**
 * u64's maximum as a JavaScript number. 2^64 − 1 has no exact double: `JSON.parse` (and this
 * literal) round it up to 2^64, which is therefore the largest value a u64 field can hold here.
 */
export const U64_MAX_AS_NUMBER = 2 ** 64

/**
 * Rust `u64` / `usize`: any integral non-negative number up to u64's maximum
 * (18446744073709551615), so Logbook reads every record VT Code reads. Counts above 2^53 − 1
 * are the nearest doubles after `JSON.parse` (approximate); integer literals above u64's
 * maximum are refused when the line is parsed (see `parseJsonText`). Writing such a count is
 * refused by the canonical encoder, which cannot write it exactly. Generated values (property
 * tests) are safe integers.
 */
export const U64 = Schema.Number.check(
  Schema.makeFilter((n: number) => Number.isInteger(n) && n <= U64_MAX_AS_NUMBER, {
    expected: "an integer from 0 to 18446744073709551615 (u64)",
    arbitraryConstraint: { number: "integer" }
  }),
  Schema.isGreaterThanOrEqualTo(0)
)

/** Rust `u32`. */
export const U32 = Schema.Int.check(Schema.isUint32())

/** Rust `u8`. */
export const U8 = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 255 }))

/** Rust `i32`. */
export const I32 = Schema.Int.check(Schema.isInt32())

/**
 * A `#[serde(skip_serializing_if = "Option::is_none")]` field: the key is omitted when absent.
 * Like serde's `Option<T>`, an explicit `null` decodes as absent; encoding also drops a
 * `null` value (possible only for JSON payloads) so that encode → decode → encode is stable.
 */
export const omittedWhenAbsent = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(Schema.NullOr(schema)).pipe(
    Schema.decodeTo(
      Schema.optionalKey(Schema.toType(schema)),
      SchemaTransformation.transformOptional<S["Type"], S["Type"] | null>({
        decode: Option.filter((value): value is S["Type"] => value !== null),
        encode: Option.filter((value): value is S["Type"] => value !== null)
      })
    )
  )

/**
 * A plain serde `Option<T>` field (no skip): always written, `null` when absent; a missing
 * key decodes as `null`, as serde does for `Option` fields.
 */
export const nullWhenAbsent = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(Schema.NullOr(schema)).pipe(
    Schema.decodeTo(
      Schema.NullOr(Schema.toType(schema)),
      SchemaTransformation.transformOptional<S["Type"] | null, S["Type"] | null>({
        decode: (value) => Option.some(Option.getOrNull(value)),
        encode: (value) => value
      })
    )
  )

/**
 * A `#[serde(default)]` field: a missing key decodes to `value`; the field is always
 * written (the reference never skips it), so byte identity needs it on every line.
 */
export const defaulted = <S extends Schema.Top>(schema: S, value: S["Encoded"]) =>
  schema.pipe(Schema.withDecodingDefaultKey(Effect.succeed(value)))

const isNumber = (value: number | null): value is number => value !== null

/**
 * A V3 `Usage` counter (`#[serde(default, deserialize_with = null_as_default)]`): missing or
 * `null` decodes to 0; always written.
 */
export const NullTolerantCounter = Schema.optionalKey(Schema.NullOr(U64)).pipe(
  Schema.decodeTo(
    U64,
    SchemaTransformation.transformOptional<number, number | null>({
      decode: (value) => Option.some(Option.getOrElse(Option.filter(value, isNumber), () => 0)),
      encode: (value) => value
    })
  )
)

/**
 * A snake_case enum with a `#[serde(other)] Unknown` catch-all: any other string decodes to
 * `"unknown"` (forward compatibility with newer writers); non-strings still fail.
 */
export const tolerantLiterals = <const L extends ReadonlyArray<string>>(literals: L) => {
  const target = Schema.Literals([...literals, "unknown"])
  type Target = L[number] | "unknown"
  const known: ReadonlySet<string> = new Set(literals)
  const isKnown = (value: string): value is Target => known.has(value)
  return Schema.String.pipe(
    Schema.decodeTo<Schema.Codec<Target>, typeof Schema.String>(
      target,
      SchemaTransformation.transform<Target, string>({
        decode: (value) => isKnown(value) ? value : "unknown",
        encode: (value) => value
      })
    )
  )
}

const isNonEmptyArray = <A>(value: ReadonlyArray<A> | null): value is ReadonlyArray<A> =>
  value !== null && value.length > 0

/**
 * A `Vec<T>` field with `#[serde(default, skip_serializing_if = "Vec::is_empty",
 * deserialize_with = null_as_default)]`: missing, `null` and `[]` all decode as absent, and
 * an empty array is never written.
 */
export const omittedWhenEmpty = <S extends Schema.Top>(item: S) =>
  Schema.optionalKey(Schema.NullOr(Schema.Array(item))).pipe(
    Schema.decodeTo(
      Schema.optionalKey(Schema.Array(Schema.toType(item))),
      SchemaTransformation.transformOptional<ReadonlyArray<S["Type"]>, ReadonlyArray<S["Type"]> | null>({
        decode: Option.filter(isNonEmptyArray),
        encode: Option.filter(isNonEmptyArray)
      })
    )
  )
