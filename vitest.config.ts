/**
 * Root Vitest configuration. Vitest 5 reads projects from `test.projects`; the list lives in
 * `vitest.workspace.ts` so adding a project never touches shared settings.
 */
import { defineConfig } from "vitest/config"
import { SummaryReporter } from "./vitest.summary.ts"
import { projects } from "./vitest.workspace.ts"

export default defineConfig({
  resolve: {
    // Workspace packages export their TypeScript sources under this condition.
    conditions: ["@logbook/source"]
  },
  ssr: {
    resolve: {
      conditions: ["@logbook/source"]
    }
  },
  test: {
    projects,
    reporters: ["default", new SummaryReporter()],
    // Sized for a loaded machine (every core busy): tests never assert speed, only outcomes.
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
