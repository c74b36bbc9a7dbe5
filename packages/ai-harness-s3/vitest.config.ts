import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 's3',
    include: ['test/**/*.test.ts'],
    // Starts the S3 test server on loopback, unless S3_ENDPOINT points at a real service.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
