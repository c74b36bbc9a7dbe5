import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { checkNodeImports, isNodeBuiltin, runtimeUses } from '../checks/check-node-imports.mjs'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const exportsOf = (entries: Record<string, string>) =>
  Object.fromEntries(Object.entries(entries).map(([entry, file]) => [entry, { types: file.replace(/\.js$/, '.d.ts'), import: file }]))

/** A throwaway repository with one package `packages/p` whose `exports` and sources are given. */
function packageWith(entries: Record<string, string>, files: Record<string, string>): string {
  const repo = mkdtempSync(join(tmpdir(), 'check-node-imports-'))
  dirs.push(repo)
  const all = { 'packages/p/package.json': JSON.stringify({ name: 'p', exports: exportsOf(entries) }), ...files }
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(join(repo, path, '..'), { recursive: true })
    writeFileSync(join(repo, path), text)
  }
  return repo
}

const findingsOf = (repo: string, nodeOnly: string[] = []) =>
  checkNodeImports(repo, ['packages/p'], nodeOnly).findings.map(
    (f) => `${f.entry}: ${f.chain.at(-1)?.slice(repo.length + 1) ?? ''} ${f.use}`,
  )

describe('check-node-imports', () => {
  it('counts what runs: value imports, re-exports, `import { type A }` and dynamic imports, not `import type`', () => {
    const text = [
      "import { randomUUID } from 'node:crypto'",
      "import type { Socket } from 'node:net'",
      "import { type Readable } from 'node:stream'",
      "export { a } from './a.js'",
      "export type { B } from './b.js'",
      "const fs = await import('node:fs')",
    ].join('\n')
    expect(runtimeUses('x.ts', text).loads).toEqual(['node:crypto', 'node:stream', './a.js', 'node:fs'])
  })

  it('finds Node globals used as values (Buffer, process, setImmediate), not types nor feature tests', () => {
    const text = [
      'const a = Buffer.from("x")',
      'const b = new Buffer(1)',
      'let c: Buffer | undefined',
      'const d = (globalThis as { Buffer?: { byteLength(s: string): number } }).Buffer?.byteLength',
      'const e = process.env.X',
      'setImmediate(() => {})',
      "const f = typeof setImmediate === 'function' ? 1 : 0",
      'const g = { process: 1 }.process',
    ].join('\n')
    expect(runtimeUses('x.ts', text).globalUses).toEqual([
      'Buffer (line 1)',
      'Buffer (line 2)',
      'process (line 5)',
      'setImmediate (line 6)',
    ])
  })

  it('knows the built-ins with and without the node: prefix, and nothing else', () => {
    expect(['node:crypto', 'crypto', 'fs/promises', 'node:test'].map(isNodeBuiltin)).toEqual([true, true, true, true])
    expect(['zod', '@tanstack/ai', './crypto.js'].map(isNodeBuiltin)).toEqual([false, false, false])
  })

  it('fails on a built-in reached from an entry point, and names the chain of files to it', () => {
    const repo = packageWith(
      { '.': './dist/index.js' },
      {
        'packages/p/src/index.ts': "export { host } from './host.js'",
        'packages/p/src/host.ts': "import { id } from './ids.js'\nexport const host = () => id()",
        'packages/p/src/ids.ts': "import { randomUUID } from 'node:crypto'\nexport const id = () => randomUUID()",
        'packages/p/src/unreached.ts': "import 'node:fs'",
      },
    )
    const { findings } = checkNodeImports(repo, ['packages/p'], [])
    expect(findings.map((f) => f.chain.map((file) => file.slice(repo.length + 1)))).toEqual([
      ['packages/p/src/index.ts', 'packages/p/src/host.ts', 'packages/p/src/ids.ts'],
    ])
    expect(findings[0]?.use).toBe('imports node:crypto')
  })

  it('lets a Node-only entry point use Node, but not a portable entry that reaches the same file', () => {
    const repo = packageWith(
      { '.': './dist/index.js', './node': './dist/node.js' },
      {
        'packages/p/src/index.ts': "export const id = () => crypto.randomUUID()\nexport { listen } from './node.js'",
        'packages/p/src/node.ts': "import { createServer } from 'node:http'\nexport const listen = () => createServer()",
      },
    )
    expect(findingsOf(repo, ['packages/p ./node'])).toEqual(['packages/p .: packages/p/src/node.ts imports node:http'])
    writeFileSync(join(repo, 'packages/p/src/index.ts'), 'export const id = () => crypto.randomUUID()')
    expect(findingsOf(repo, ['packages/p ./node'])).toEqual([])
    expect(findingsOf(repo), 'without the allowlist the Node-only entry fails too').toEqual([
      'packages/p ./node: packages/p/src/node.ts imports node:http',
    ])
  })

  it('fails on an allowlisted entry point that is not in exports any more', () => {
    const repo = packageWith({ '.': './dist/index.js' }, { 'packages/p/src/index.ts': 'export const a = 1' })
    expect(checkNodeImports(repo, ['packages/p'], ['packages/p ./gone']).findings.map((f) => f.entry)).toEqual(['packages/p ./gone'])
  })

  it("passes on this repository's portable packages (the core, memory, DynamoDB, S3)", () => {
    const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
    const out = execFileSync(process.execPath, [join(repo, 'tooling/checks/check-node-imports.mjs')], { encoding: 'utf8' })
    expect(out).toMatch(/check-node-imports: \d+ entry points reach no Node built-in/)
  })
})
