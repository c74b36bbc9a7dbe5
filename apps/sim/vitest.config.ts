import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'sim',
    include: ['test/**/*.test.ts'],
    // A fixed number of worlds per store: seconds each on memory, more on PGlite.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
})
