/**
 * The list of Vitest test projects: one per package. `vitest.config.ts` reads this
 * list into `test.projects`; add bench or e2e projects here when they appear.
 */
const packages = ["domain", "store", "projections", "runtime", "testkit"] as const

/** CLI tests of the fleet commands need the fleet database, so they run in the fleet project. */
const runtimeFleetTests = "packages/runtime/test/cli/fleet/**/*.test.ts"

/** One inline project per package, resolving workspace imports to their sources. */
export const projects = [
  ...packages.map((name) => ({
    extends: true as const,
    test: {
      name,
      include: [`packages/${name}/test/**/*.test.ts`],
      exclude: ["**/node_modules/**", runtimeFleetTests]
    }
  })),
  // Everything that talks to PostgreSQL: one server per run (an embedded PGlite unless
  // LOGBOOK_TEST_DATABASE_URL names one), files one after another because PGlite serves one
  // connection at a time and each file starts from an empty, freshly migrated database.
  {
    extends: true as const,
    test: {
      name: "fleet",
      include: ["packages/fleet/test/**/*.test.ts", runtimeFleetTests],
      globalSetup: ["packages/fleet/test/support/globalSetup.ts"],
      fileParallelism: false
    }
  },
  // Repository-wide checks (self-containment) under the root `test/` folder.
  { extends: true as const, test: { name: "repo", include: ["test/repo/**/*.test.ts"] } }
]
