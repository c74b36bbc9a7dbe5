import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'runtimes',
    include: ['test/**/*.test.ts'],
    // Each runtime is a child process with its own time limit (see test/run-child.ts).
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
})
