import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'postgres',
    include: ['test/**/*.test.ts'],
    // The PostgreSQL of the run: the one at the PG* settings, or one the setup starts
    // (see tooling/postgres-global-setup.ts and the root README).
    globalSetup: ['../../tooling/postgres-global-setup.ts'],
    // Real PostgreSQL and a WASM Postgres: allow for a slow machine. The crash test is one
    // test of 24 kill-and-recover runs: about 100 s on an idle 2-core machine, more when the
    // whole suite (or another job) shares the cores.
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
})
