import { defineProject } from 'vitest/config'

// The browser test starts PostgreSQL (the run's own when none answers; see
// tooling/postgres-global-setup.ts), two server processes and Chromium: generous bounds,
// though a run takes a few seconds.
export default defineProject({
  test: {
    name: 'web',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    globalSetup: ['../../tooling/postgres-global-setup.ts'],
  },
})
