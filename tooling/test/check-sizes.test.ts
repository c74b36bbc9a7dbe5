import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ALLOWED, classLengths, MAX_CLASS_LINES, MAX_FILE_LINES, oversize, RUNTIME_ROOTS } from '../checks/check-sizes.mjs'
import { shown, sourceFiles } from '../checks/source-files.mjs'

const lines = (n: number) => Array.from({ length: n }, (_, i) => `const v${i} = ${i}`).join('\n')
const classOf = (name: string, n: number) => `export class ${name} {\n${lines(n - 2)}\n}`

describe('check-sizes', () => {
  it('measures each class, nested and anonymous ones too, from its first line to its last', () => {
    const text = ['const a = 1', 'class Outer {', '  m() {', '    return class {}', '  }', '}'].join('\n')
    expect(classLengths('x.ts', text)).toEqual([
      { name: 'Outer', line: 2, lines: 5 },
      { name: '(anonymous class)', line: 4, lines: 1 },
    ])
  })

  it('lists runtime files over the line limit and classes over theirs, and lets the allowed files through', () => {
    const files: Record<string, string> = {
      'runtime/long.ts': lines(MAX_FILE_LINES + 1),
      'runtime/fits.ts': lines(MAX_FILE_LINES),
      'runtime/allowed.ts': `${lines(MAX_FILE_LINES)}\n${classOf('Big', MAX_CLASS_LINES + 1)}`,
      'other/long.ts': lines(MAX_FILE_LINES + 1),
      'other/big-class.ts': classOf('Big', MAX_CLASS_LINES + 1),
      'other/class-fits.ts': classOf('Fits', MAX_CLASS_LINES),
    }
    const found = oversize({
      runtime: ['runtime/long.ts', 'runtime/fits.ts', 'runtime/allowed.ts'],
      all: Object.keys(files),
      allowed: ['runtime/allowed.ts'],
      read: (path) => files[path]!,
    })
    expect(found).toEqual([
      { file: 'runtime/long.ts', what: 'file', lines: MAX_FILE_LINES + 1, max: MAX_FILE_LINES },
      { file: 'other/big-class.ts:1', what: 'class Big', lines: MAX_CLASS_LINES + 1, max: MAX_CLASS_LINES },
    ])
  })

  it('finds none over the limits in this repository, and each allowed file is still over one (else drop it from the list)', () => {
    const repo = join(import.meta.dirname, '../..')
    const name = (path: string) => shown(repo, path)
    const runtime = sourceFiles(repo, RUNTIME_ROOTS)
    const all = sourceFiles(repo, ['packages/*/src'])
    expect(oversize({ runtime, all, allowed: ALLOWED, name })).toEqual([])
    const overAll = oversize({ runtime, all, name })
    for (const file of ALLOWED)
      expect(
        overAll.some((o) => o.file === file || o.file.startsWith(`${file}:`)),
        file,
      ).toBe(true)
  })
})
