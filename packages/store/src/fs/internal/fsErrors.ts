/**
 * Turning thrown Node errors (and the store's own refusals) into the tagged store errors, and
 * reading their OS error code, so every `SessionFs` method reports `operation`, `path` and `code`
 * the same way.
 */
import { Predicate } from "effect"
import { CreateDirError, StoreIoError } from "../StoreError.ts"

/**
 * A refusal raised by the store itself inside a synchronous syscall sequence (a symlink where
 * none may be, a `..` component, a short read). It is thrown like a Node error so one `catch`
 * maps both; it never escapes `SessionFs`.
 */
export class FsRefusal extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.code = code
  }
}

/** The OS error code of a thrown value (`EUNKNOWN` when it carries none). */
export const errorCode = (cause: unknown): string =>
  Predicate.hasProperty(cause, "code") && typeof cause.code === "string" ? cause.code : "EUNKNOWN"

/** Human-readable detail of a thrown value. */
export const errorDetail = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/** Maps a thrown value to a `StoreIoError` for `operation` on `path`. */
export const toIoError = (operation: string, path: string) => (cause: unknown): StoreIoError =>
  new StoreIoError({ operation, path, code: errorCode(cause), detail: errorDetail(cause) })

/** Maps a thrown value to a `CreateDirError` for `operation` on `path`. */
export const toCreateDirError = (operation: string, path: string) => (cause: unknown): CreateDirError =>
  new CreateDirError({ operation, path, code: errorCode(cause), detail: errorDetail(cause) })

/** A `StoreIoError` raised by the store itself (no OS error behind it). */
export const ioRefusal = (operation: string, path: string, code: string, detail: string): StoreIoError =>
  new StoreIoError({ operation, path, code, detail })
