import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { functionLengths, longFunctions, MAX_LINES } from '../checks/check-function-length.mjs'
import { sourceFiles } from '../checks/source-files.mjs'

const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i}`).join('\n')

describe('check-function-length', () => {
  it('measures declarations, arrows, methods and nested functions, each by its own lines', () => {
    const text = [
      `export function outer() {`, // 1
      body(3),
      `  const inner = () => {`, // 5
      body(2),
      `  }`,
      `  return { method() { return 1 } }`, // 9
      `}`,
    ].join('\n')
    expect(functionLengths('x.ts', text).map(({ name, line, lines }) => ({ name, line, lines }))).toEqual([
      { name: 'outer', line: 1, lines: 10 },
      { name: 'inner', line: 5, lines: 4 },
      { name: 'method', line: 9, lines: 1 },
    ])
  })

  it('is not fooled by braces in strings, template literals and comments', () => {
    const text = ['function f() {', "  const a = '}}}'", '  const b = `}}`', '  // }', '  return a + b', '}'].join('\n')
    expect(functionLengths('x.ts', text)[0]?.lines).toBe(6)
  })

  it('takes a "// long:" reason above the function, through its TSDoc, or on its first line', () => {
    const text = [
      '// long: one case per record type',
      '/**',
      ' * Folds a record.',
      ' */',
      'export function fold() {',
      '}',
      'const f = () => { // long: kept whole for the reader',
      '}',
      '// long: this one is far away',
      'const x = 1',
      'function g() {',
      '}',
    ].join('\n')
    expect(functionLengths('x.ts', text).map((fn) => fn.reason)).toEqual([
      'one case per record type',
      'kept whole for the reader',
      undefined,
    ])
  })

  it('lists only functions over the limit without a reason', () => {
    const files = {
      'long.ts': `function long() {\n${body(MAX_LINES)}\n}`,
      'why.ts': `// long: a table\nfunction why() {\n${body(MAX_LINES)}\n}`,
    }
    const found = longFunctions(Object.keys(files), MAX_LINES, (path) => files[path as keyof typeof files])
    expect(found.map((fn) => [fn.name, fn.lines, fn.reason])).toEqual([
      ['long', MAX_LINES + 2, undefined],
      ['why', MAX_LINES + 2, 'a table'],
    ])
  })

  it('finds none without a reason in this repository', () => {
    const files = sourceFiles(join(import.meta.dirname, '../..'), ['packages/*/src'])
    expect(longFunctions(files).filter((fn) => fn.reason === undefined)).toEqual([])
  })
})
