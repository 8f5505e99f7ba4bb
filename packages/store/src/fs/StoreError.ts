/**
 * The store's file-system error values. Every persistence failure reaches the caller as one of
 * these tagged, serialisable errors, carrying the operation that failed, the path it touched and
 * the OS error code, so hosts and the CLI can print them and tests can match on the code.
 */
import { Schema } from "effect"

/**
 * An I/O failure on a session-store path (the reference store's `Io` error kind). `code` is the OS error code (`ENOENT`,
 * `ELOOP`, `EIO`, `ENOSPC`, `EACCES`, `EINVAL`, …) or a store-specific code such as
 * `UNEXPECTED_EOF` for a short read; `detail` is the human-readable cause; `operation` names the
 * `SessionFs` method that failed.
 */
export class StoreIoError extends Schema.TaggedError<StoreIoError>()("StoreIoError", {
  operation: Schema.String,
  path: Schema.String,
  code: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `session store IO error at ${this.path}: ${this.detail} (${this.operation})`
  }
}

/**
 * Creating or securing a session directory failed (the reference store's `CreateDir` error kind): a `..` component, a
 * symlinked final component, a symlinked ancestor escaping its parent, an existing non-directory,
 * or an OS error while creating or chmod-ing.
 */
export class CreateDirError extends Schema.TaggedError<CreateDirError>()("CreateDirError", {
  operation: Schema.String,
  path: Schema.String,
  code: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `failed to create session directory ${this.path}: ${this.detail} (${this.operation})`
  }
}

/** Any file-system error the store raises. */
export type StoreError = StoreIoError | CreateDirError
