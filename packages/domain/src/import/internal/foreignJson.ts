/**
 * Total accessors for parsed foreign JSON (session files of other agents): each returns the
 * field when it has the expected kind and `undefined` otherwise, so the import mappers never
 * throw on a record of an unexpected shape.
 */
import { Predicate, Result, Schema } from "effect"

/** A JSON object (not an array, not null). */
export type JsonRecord = { readonly [key: string]: unknown }

/** Whether a parsed JSON value is an object (not an array, not null). */
export const isRecord: (value: unknown) => value is JsonRecord = Predicate.isReadonlyObject

/** `value[key]` of an object, else undefined. */
export const field = (value: unknown, key: string): unknown => isRecord(value) ? value[key] : undefined

/** Parses JSON text; undefined when it is not JSON (foreign arguments often are not). */
export const parseJsonValue = (text: string): Schema.Json | undefined => {
  const parsed = Result.try((): Schema.Json => JSON.parse(text))
  return Result.isSuccess(parsed) ? parsed.success : undefined
}

/** `value[key]` when it is a string. */
export const str = (value: unknown, key: string): string | undefined => {
  if (!isRecord(value)) return undefined
  const v = value[key]
  return typeof v === "string" ? v : undefined
}

/** `value[key]` when it is a finite number. */
export const num = (value: unknown, key: string): number | undefined => {
  if (!isRecord(value)) return undefined
  const v = value[key]
  return typeof v === "number" && Number.isFinite(v) ? v : undefined
}

/** `value[key]` when it is an object. */
export const obj = (value: unknown, key: string): JsonRecord | undefined => {
  if (!isRecord(value)) return undefined
  const v = value[key]
  return isRecord(v) ? v : undefined
}

/** `value[key]` when it is an array. */
export const arr = (value: unknown, key: string): ReadonlyArray<unknown> | undefined => {
  if (!isRecord(value)) return undefined
  const v = value[key]
  return Array.isArray(v) ? v : undefined
}

/** A non-negative integer counter read from a foreign usage object (anything else counts 0). */
export const counter = (value: unknown, key: string): number => {
  const n = num(value, key)
  return n === undefined || n < 0 ? 0 : Math.floor(n)
}

/** An exit code that fits the contract's `i32`, or undefined. */
export const exitCodeOf = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value >= -2147483648 && value <= 2147483647
    ? value
    : undefined
