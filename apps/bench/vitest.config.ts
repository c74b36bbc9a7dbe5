import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'bench',
    include: ['test/**/*.test.ts'],
    // The quick run measures PostgreSQL too: the same server as the postgres project.
    globalSetup: ['../../tooling/postgres-global-setup.ts'],
    // The quick run starts PostgreSQL schemas, PGlite, dynalite, the S3 test server,
    // DBOS and LangGraph: well under 30 s alone, more when other projects share the cores.
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
})
