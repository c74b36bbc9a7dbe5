import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'docs',
    include: ['**/*.test.ts'],
    exclude: ['.generated/**', 'node_modules/**'],
    // One TypeScript program over every page, PGlite, and a vitest of its own for the store page.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
})
