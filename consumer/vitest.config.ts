import { defineProject } from 'vitest/config'

// Packs every library, installs the tarballs with npm in a project under the OS temp
// folder, and runs that project's code and its own vitest there. npm may have to fetch
// from the registry on a cold cache: the timeouts are generous, and each command has its own.
export default defineProject({
  test: {
    name: 'consumer',
    include: ['*.test.ts'],
    testTimeout: 240_000,
    hookTimeout: 900_000,
  },
})
