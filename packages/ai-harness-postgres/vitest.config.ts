import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'postgres',
    include: ['test/**/*.test.ts'],
    // Real PostgreSQL and a WASM Postgres: allow for a slow machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})
