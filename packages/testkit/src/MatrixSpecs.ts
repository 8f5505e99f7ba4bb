/**
 * Builders of matrix specifications for tests: a valid task with any field overridden, and a
 * spec over tasks, so every suite starts from the same valid shape and states only what matters.
 */
import type { MatrixSpec, MatrixTaskSpec } from "@logbook/domain"

/** A valid read task named `id` (workspace `.`, one check `check <id>`, 60 s); override any field. */
export const matrixTask = (id: string, overrides: Partial<MatrixTaskSpec> = {}): MatrixTaskSpec => ({
  id,
  instructions: `do ${id}`,
  dependencies: [],
  workspace: ".",
  access: "read",
  checks: [`check ${id}`],
  resources: {},
  timeout_secs: 60,
  replay_safe: false,
  inputs: [],
  ...overrides
})

/** A spec `id` (default `m`) over `tasks` and resource pools. */
export const matrixSpec = (
  tasks: ReadonlyArray<MatrixTaskSpec>,
  options: { readonly id?: string; readonly resources?: Record<string, number> } = {}
): MatrixSpec => ({ id: options.id ?? "m", tasks, resources: options.resources ?? {} })

/** The two-task pipeline many suites use: `build`, then `test` depending on it; tasks work in `workspace`. */
export const buildTestSpec = (id: string, workspace = "."): MatrixSpec =>
  matrixSpec([
    matrixTask("build", { workspace }),
    matrixTask("test", { workspace, dependencies: ["build"] })
  ], { id })
