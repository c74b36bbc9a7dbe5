import { defineConfig } from 'vitest/config'

// One run over every package, so CI gets one summary. Each package keeps its own
// vitest.config.ts (timeouts, global setup for test servers).
export default defineConfig({
  test: {
    projects: [
      'packages/*/vitest.config.ts',
      'packages/ai-harness/test/vitest.config.ts',
      'conformance/test/vitest.config.ts',
      'docs/test/vitest.config.ts',
      'apps/*/vitest.config.ts',
      'consumer/vitest.config.ts',
      'tooling/vitest.config.ts',
      'runtimes/vitest.config.ts',
    ],
    // Most files wait on sockets, child processes and test servers rather than compute:
    // two files at a time keep both cores of a small CI machine busy (vitest's default is
    // cores - 1, one file at a time on two cores).
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest/results.json' },
  },
})
