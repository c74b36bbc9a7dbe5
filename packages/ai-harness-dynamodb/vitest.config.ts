import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'dynamodb',
    include: ['test/**/*.test.ts'],
    // Starts dynalite in memory on a loopback port (unless DYNAMODB_ENDPOINT is set) and creates the table.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
})
