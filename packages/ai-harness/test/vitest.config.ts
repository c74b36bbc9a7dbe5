import { defineProject } from 'vitest/config'

export default defineProject({
  test: { name: 'harness', include: ['**/*.test.ts'], testTimeout: 30_000 },
})
