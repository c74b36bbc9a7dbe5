import { defineProject } from 'vitest/config'

// The tests run the built CLI (dist/cli.js) in real child processes, and PGlite starts
// a fresh database per test: generous timeouts, files one at a time so runs on a small
// machine do not starve each other.
export default defineProject({
  test: {
    name: 'checkout',
    include: ['test/**/*.test.ts'],
    testTimeout: 240_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
})
