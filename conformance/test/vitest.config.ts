import { defineProject } from 'vitest/config'

export default defineProject({
  test: { name: 'conformance-self', include: ['**/*.test.ts'], testTimeout: 60_000 },
})
