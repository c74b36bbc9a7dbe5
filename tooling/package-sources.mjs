// @ts-check
// The TypeScript files a package's build compiles, as every tsconfig.build.json includes them:
// all of src/, tests and declarations aside (tooling/transpile.mjs, tooling/prepack.mjs).
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * @param {string} dir
 * @returns {string[]}
 */
export function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.ts$/.test(entry.name) && !/\.(test|d)\.ts$/.test(entry.name) ? [path] : []
  })
}
