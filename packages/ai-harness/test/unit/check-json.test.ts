import { describe, expect, it } from 'vitest'
import { findNonJson, jsonBytes, jsonCopy, utf8Length } from '../../src/log.js'

class Money {
  constructor(readonly cents: number) {}
}

describe('findNonJson names the first non-JSON value and its path', () => {
  const cases: Array<[string, unknown, string]> = [
    ['a Date', { at: new Date(0) }, '$.at'],
    ['a Map', { m: new Map() }, '$.m'],
    ['a Set', [1, new Set()], '$[1]'],
    ['a class instance', { price: new Money(5) }, '$.price'],
    ['undefined in an array', { list: [1, undefined] }, '$.list[1]'],
    ['a BigInt', { n: 1n }, '$.n'],
    ['NaN', { n: Number.NaN }, '$.n'],
    ['Infinity', { deep: { n: Number.POSITIVE_INFINITY } }, '$.deep.n'],
    ['-Infinity', [Number.NEGATIVE_INFINITY], '$[0]'],
    ['a function', { f: () => 1 }, '$.f'],
    ['a symbol', { s: Symbol('x') }, '$.s'],
    ['a typed array', { b: new Uint8Array(2) }, '$.b'],
    ['a key that is not an identifier', { 'a b': new Date() }, '$["a b"]'],
  ]
  for (const [what, value, path] of cases) {
    it(`refuses ${what} at ${path}`, () => {
      expect(findNonJson(value)?.path).toBe(path)
    })
  }

  it('refuses a cycle', () => {
    const a: Record<string, unknown> = {}
    a.self = a
    expect(findNonJson(a)).toMatchObject({ path: '$.self', reason: expect.stringContaining('cycle') })
  })

  it('finds a cycle and accepts shared references deep in a value too (past the short path the walk keeps as a list)', () => {
    const root: Record<string, unknown> = {}
    let node = root
    for (let depth = 0; depth < 100; depth++) {
      const next: Record<string, unknown> = {}
      node.n = next
      node = next
    }
    const shared = { x: 1 }
    node.a = shared
    node.b = [shared, shared]
    expect(findNonJson(root)).toBeNull()
    node.back = root.n
    const found = findNonJson(root)
    expect(found?.reason).toContain('cycle')
    expect(found?.path).toBe(`$${'.n'.repeat(100)}.back`)
  })

  it('says what to do instead for a Date', () => {
    expect(findNonJson({ at: new Date() })?.reason).toContain('toISOString()')
  })

  it('accepts plain JSON, null-prototype objects, shared (non-cyclic) references and undefined properties', () => {
    const shared = { x: 1 }
    const bare = Object.assign(Object.create(null), { y: 2 })
    expect(findNonJson({ a: [1, 'two', true, null, {}], shared, again: shared, bare, gone: undefined })).toBeNull()
  })

  it('refuses undefined at the top unless allowed', () => {
    expect(findNonJson(undefined)?.path).toBe('$')
    expect(findNonJson(undefined, { allowUndefinedAtTop: true })).toBeNull()
  })
})

describe('json helpers', () => {
  it('jsonCopy returns what a later run reads back', () => {
    expect(jsonCopy({ a: 1, gone: undefined })).toEqual({ a: 1 })
    expect(Object.hasOwn(jsonCopy({ gone: undefined }) as object, 'gone')).toBe(false)
    expect(jsonCopy(undefined)).toBeUndefined()
  })

  it('measures UTF-8 bytes like Buffer does', () => {
    for (const text of ['', 'abc', '\u00e9', '\u20ac', '\u{1F600}', 'a\u0000b', '\ud800']) {
      expect(utf8Length(text)).toBe(Buffer.byteLength(text, 'utf8'))
    }
    expect(jsonBytes({ a: '\u{1F600}' })).toBe(Buffer.byteLength(JSON.stringify({ a: '\u{1F600}' })))
  })
})

describe('findNonJson on values past the walk without a path (deep, shared, sparse)', () => {
  const nest = (depth: number, leaf: unknown): unknown => {
    let value = leaf
    for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { k: value }
    return value
  }
  it('takes deep trees of JSON for JSON, and finds a fault at the bottom of one', () => {
    expect(findNonJson(nest(40, 1))).toBeNull()
    expect(findNonJson(nest(40, new Date(0)))?.path).toMatch(/^\$(\.k|\[0\])+$/)
    expect(findNonJson(nest(40, new Date(0)))?.reason).toContain('Date')
  })
  it('takes a value shared by two branches for JSON, and a cycle for none', () => {
    const shared = { n: 1 }
    expect(findNonJson({ a: shared, b: [shared] })).toBeNull()
    const cycle: Record<string, unknown> = { n: 1 }
    cycle.self = { back: cycle }
    expect(findNonJson(cycle)?.path).toBe('$.self.back')
  })
  it('refuses a hole in an array, and undefined at the top unless allowed', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the case
    expect(findNonJson({ list: [1, , 3] })?.path).toBe('$.list[1]')
    expect(findNonJson(undefined)?.path).toBe('$')
    expect(findNonJson(undefined, { allowUndefinedAtTop: true })).toBeNull()
    expect(findNonJson({ a: undefined, b: { c: undefined } })).toBeNull()
  })
})
