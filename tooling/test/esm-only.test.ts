/**
 * ESM only, pinned: every published library's every entry point refuses `require()` with
 * the error its README quotes (that `import` loads them, the consumer and runtimes tests
 * show). A library that added a `require` condition would fail here until its README says so.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { LIBRARIES } from './libraries.js'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

const manifestOf = (dir: string) => JSON.parse(readFileSync(join(repo, dir, 'package.json'), 'utf8'))

/**
 * `require()` of each specifier in a new Node process, from the package's own folder (Node
 * resolves a package's own name there through its `exports`, as it does from an app).
 */
function requireEach(dir: string, specifiers: string[]): Array<{ specifier: string; code?: string; message?: string }> {
  const script = `
    const { createRequire } = require('node:module')
    const load = createRequire(${JSON.stringify(join(repo, dir, 'package.json'))})
    const out = []
    for (const specifier of ${JSON.stringify(specifiers)}) {
      try { load(specifier); out.push({ specifier }) } catch (error) { out.push({ specifier, code: error.code, message: error.message }) }
    }
    console.log(JSON.stringify(out))`
  return JSON.parse(execFileSync(process.execPath, ['--input-type=commonjs', '-e', script], { encoding: 'utf8', timeout: 30_000 }))
}

describe.each(LIBRARIES)('%s is ESM only', (dir) => {
  const manifest = manifestOf(dir)
  const name = manifest.name as string
  const specifiers = Object.keys(manifest.exports).map((entry) => (entry === '.' ? name : `${name}/${entry.slice(2)}`))

  it('has an import condition and no require condition on any entry point', () => {
    expect(manifest.type).toBe('module')
    for (const [entry, target] of Object.entries(manifest.exports as Record<string, Record<string, string>>)) {
      expect(Object.keys(target), entry).toContain('import')
      expect(Object.keys(target), entry).not.toContain('require')
      expect(Object.keys(target), entry).not.toContain('default')
    }
  })

  it('refuses require() of every entry point with ERR_PACKAGE_PATH_NOT_EXPORTED', () => {
    const results = requireEach(dir, specifiers)
    expect(results.map((r) => `${r.specifier}: ${r.code}`)).toEqual(specifiers.map((s) => `${s}: ERR_PACKAGE_PATH_NOT_EXPORTED`))
    expect(results[0]?.message).toMatch(/^No "exports" main defined in .*package\.json/)
  })

  it('says so in its README: the error a require() user sees, and the import to write instead', () => {
    const readme = readFileSync(join(repo, dir, 'README.md'), 'utf8')
    const section = readme.slice(readme.indexOf('## ESM only'))
    expect(readme).toContain('## ESM only')
    expect(section).toContain(`Error [ERR_PACKAGE_PATH_NOT_EXPORTED]: No "exports" main defined in …/node_modules/${name}/package.json`)
    expect(section).toContain(`await import('${name}')`)
  })
})
