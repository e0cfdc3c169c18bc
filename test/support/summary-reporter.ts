/**
 * Ends every `npm test` run with one plain line, `Tests: N passed, N failed, N skipped`, that log readers
 * (CI included) understand without knowing vitest's own summary format.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else counts.skipped++;
      }
      // A file that failed to load has no tests to count: count it as a failure, never as nothing.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) counts.failed++;
    }
    counts.failed += unhandledErrors.length;
    console.log(`\nTests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
}
