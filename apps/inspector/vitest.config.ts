import { defineProject } from 'vitest/config'

// The browser test starts Chromium: a generous timeout.
export default defineProject({
  test: {
    name: 'inspector',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
})
