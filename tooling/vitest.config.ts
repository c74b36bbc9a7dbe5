import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'tooling',
    include: ['test/**/*.test.ts'],
    // One test starts and stops an embedded PostgreSQL.
    testTimeout: 120_000,
  },
})
