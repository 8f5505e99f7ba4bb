/**
 * A Vitest reporter that ends the run with one plain line, `Tests: N passed, N failed`
 * (plus `, N skipped`), so CI and scripts can read the outcome without parsing colours.
 */
import type { Reporter, TestModule } from "vitest/node"

/** Counts test cases by state across every module of the run and prints the closing line. */
export class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failed++
        else skipped++
      }
      if (module.state() === "failed" && module.children.size === 0) failed++
    }
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}\n`)
  }
}
