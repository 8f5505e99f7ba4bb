/**
 * The single error of the matrix orchestration domain (docs/matrix.md). Every validation and
 * transition failure is one `MatrixError` whose message says which rule was broken, so the
 * host can persist or print it without a second error vocabulary.
 */
import { Schema } from "effect"

/**
 * A matrix specification, snapshot, replay or transition was rejected; `message` names the
 * violated rule (VT Code's wording where it has one). Operations that fail with
 * it leave their input snapshot untouched.
 */
export class MatrixError extends Schema.TaggedError<MatrixError>()("MatrixError", {
  message: Schema.String
}) {}
