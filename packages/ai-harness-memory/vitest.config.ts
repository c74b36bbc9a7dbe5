import { defineProject } from 'vitest/config'

export default defineProject({
  // The crash-point walks run many sessions per test: vitest's 5 s default is too tight on a loaded 2-core machine.
  test: { name: 'memory', include: ['test/**/*.test.ts'], testTimeout: 60_000 },
})
