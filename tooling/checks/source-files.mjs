// @ts-check
// The source trees the code checks look at: every package's, the suite's and the apps'.
// Tests, dist and generated files stay out: the checks are about the code others import.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

/** Folders whose `src` trees are checked, relative to the repository root. */
export const SOURCE_ROOTS = ['packages/*/src', 'conformance/src', 'apps/*/src']

/**
 * The TypeScript source files under the given roots (a `*` matches one folder name).
 * @param {string} repo the repository root
 * @param {readonly string[]} [roots]
 * @returns {string[]} absolute paths, sorted
 */
export function sourceFiles(repo, roots = SOURCE_ROOTS) {
  /** @type {string[]} */
  const files = []
  for (const root of roots) {
    for (const dir of expand(repo, root.split('/'))) walk(dir, files)
  }
  return files.sort()
}

/**
 * @param {string} base
 * @param {string[]} parts
 * @returns {string[]}
 */
function expand(base, parts) {
  if (parts.length === 0) return existsSync(base) && statSync(base).isDirectory() ? [base] : []
  const [head, ...rest] = parts
  if (head === undefined) return []
  if (head !== '*') return expand(join(base, head), rest)
  if (!existsSync(base)) return []
  return readdirSync(base, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'node_modules')
    .flatMap((entry) => expand(join(base, entry.name), rest))
}

/**
 * @param {string} dir
 * @param {string[]} out
 */
function walk(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path, out)
    } else if (/\.(ts|tsx|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.push(path)
    }
  }
}

/**
 * A path as printed in a report: relative to the repository root, with forward slashes.
 * @param {string} repo
 * @param {string} path
 */
export function shown(repo, path) {
  return relative(repo, path).split('\\').join('/')
}
