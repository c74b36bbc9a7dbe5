import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { findCycles, importedSpecifiers, importGraph } from '../checks/check-cycles.mjs'
import { sourceFiles } from '../checks/source-files.mjs'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A throwaway repository laid out like this one, with the given files. */
function repoWith(files: Record<string, string>): string {
  const repo = mkdtempSync(join(tmpdir(), 'check-cycles-'))
  dirs.push(repo)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(repo, path, '..'), { recursive: true })
    writeFileSync(join(repo, path), text)
  }
  return repo
}

const cyclesIn = (repo: string) => findCycles(importGraph(sourceFiles(repo))).map((c) => c.modules.map((m) => m.slice(repo.length + 1)))

describe('check-cycles', () => {
  it('reads every kind of import: values, types, re-exports, dynamic imports and import types', () => {
    const text = [
      "import { a } from './a.js'",
      "import type { B } from './b.js'",
      "export * from './c.js'",
      "export type { D } from './d.js'",
      "const e = await import('./e.js')",
      "type F = import('./f.js').F",
      "import { z } from 'zod'",
    ].join('\n')
    expect(importedSpecifiers('x.ts', text)).toEqual(['./a.js', './b.js', './c.js', './d.js', './e.js', './f.js'])
  })

  it('finds a cycle that closes through a type-only import', () => {
    const repo = repoWith({
      'packages/p/src/session.ts': "import { run } from './runner.js'\nexport interface Session { id: string }\nexport const go = run",
      'packages/p/src/runner.ts': "import type { Session } from './session.js'\nexport const run = (s: Session) => s.id",
    })
    expect(cyclesIn(repo)).toEqual([['packages/p/src/runner.ts', 'packages/p/src/session.ts']])
  })

  it('finds cycles in the suite and the apps, through an index module', () => {
    const repo = repoWith({
      'conformance/src/index.ts': "export * from './cases/one.js'",
      'conformance/src/cases/one.ts': "import { x } from '../index.js'\nexport const one = x",
      'apps/bench/src/a.ts': "import './b.js'",
      'apps/bench/src/b.ts': "import './c.js'",
      'apps/bench/src/c.ts': "import './a.js'",
    })
    expect(cyclesIn(repo)).toEqual([
      ['apps/bench/src/a.ts', 'apps/bench/src/b.ts', 'apps/bench/src/c.ts'],
      ['conformance/src/cases/one.ts', 'conformance/src/index.ts'],
    ])
  })

  it('passes a tree whose shared type lives in a leaf module', () => {
    const repo = repoWith({
      'packages/p/src/types.ts': 'export interface Session { id: string }',
      'packages/p/src/session.ts':
        "import type { Session } from './types.js'\nimport { run } from './runner.js'\nexport const go = (s: Session) => run(s)",
      'packages/p/src/runner.ts': "import type { Session } from './types.js'\nexport const run = (s: Session) => s.id",
      'packages/p/test/loop.test.ts': "import './loop.test.js'",
    })
    expect(cyclesIn(repo)).toEqual([])
  })

  it('finds none in this repository', () => {
    expect(cyclesIn(join(import.meta.dirname, '../..'))).toEqual([])
  })
})
