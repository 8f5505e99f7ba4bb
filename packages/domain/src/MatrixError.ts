/**
 * The single error of the matrix orchestration domain (spec §3.9, §5). Every validation and
 * transition failure is one `MatrixError` whose message says which rule was broken, so the
 * host can persist or print it without a second error vocabulary.
 */
import { Schema } from "effect"

/**
 * A matrix specification, snapshot, replay or transition was rejected; `message` names the
 * violated rule (the reference's wording where spec §5 gives one). Operations that fail with
 * it leave their input snapshot untouched.
 */
export class MatrixError extends Schema.TaggedError<MatrixError>()("MatrixError", {
  message: Schema.String
}) {}
