import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'postgres',
    include: ['test/**/*.test.ts'],
    // The PostgreSQL of the run: the one at the PG* settings, or one the setup starts
    // (see tooling/postgres-global-setup.ts and the root README).
    globalSetup: ['../../tooling/postgres-global-setup.ts'],
    // Real PostgreSQL and a WASM Postgres: allow for a slow machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})
