/**
 * The list of Vitest test projects: one per package. `vitest.config.ts` reads this
 * list into `test.projects`; add bench or e2e projects here when they appear.
 */
const packages = ["domain", "store", "projections", "runtime", "testkit"] as const

/** One inline project per package, resolving workspace imports to their sources. */
export const projects = [
  ...packages.map((name) => ({
    extends: true as const,
    test: {
      name,
      include: [`packages/${name}/test/**/*.test.ts`]
    }
  })),
  // Repository-wide checks (self-containment) under the root `test/` folder.
  { extends: true as const, test: { name: "repo", include: ["test/repo/**/*.test.ts"] } }
]
