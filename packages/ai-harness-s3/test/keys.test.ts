import { describe, expect, it } from 'vitest'
import { decodeId, encodeId, keyLayout, normalizePrefix } from '../src/keys.js'

const lookAlikes = [
  'a',
  'a1',
  'A',
  'a:b',
  'a/b',
  'a%2Fb',
  'a b',
  'a:1',
  'a/',
  'a%',
  'ab',
  ' a',
  'a\u00e9',
  'a~',
  'a~0061',
  'a.b',
  '..',
  '\ud800',
  '\ufffd',
]

describe('key layout', () => {
  it('encodes log ids injectively, without "/", and decodes them back (lone surrogates too)', () => {
    const encoded = lookAlikes.map(encodeId)
    expect(new Set(encoded).size).toBe(lookAlikes.length)
    for (const [i, e] of encoded.entries()) {
      expect(e).not.toContain('/')
      expect(e).toMatch(/^[A-Za-z0-9_~-]+$/)
      expect(decodeId(e)).toBe(lookAlikes[i])
    }
    expect(encodeId('a:b')).toBe('a~003ab')
  })

  it("never makes one log's prefix a prefix of another log's keys", () => {
    const keys = keyLayout('ns')
    for (const a of lookAlikes) {
      for (const b of lookAlikes) {
        if (a !== b) expect(keys.batch(b, 1).startsWith(keys.logPrefix(a))).toBe(false)
      }
    }
  })

  it('pads batch numbers so that key order is numeric order', () => {
    const keys = keyLayout('')
    const numbers = [1, 2, 9, 10, 99, 100, 101, 1000, 123456789]
    const sorted = numbers.map((n) => keys.batch('s', n)).sort()
    expect(sorted.map((k) => keys.batchOf('s', k))).toEqual(numbers)
    expect(keys.batchOf('s1', keys.batch('s', 1))).toBeUndefined()
  })

  it('reads due time and log id back from a due key alone, in time order', () => {
    const keys = keyLayout('p/')
    const a = keys.due(Date.UTC(2026, 0, 1), 'a/b c', 't1')
    const b = keys.due(999, 'z', 't2')
    expect(keys.parseDue(a)).toEqual({ at: Date.UTC(2026, 0, 1), logId: 'a/b c', tag: 't1' })
    expect([a, b].sort()).toEqual([b, a])
    expect(keys.parseDue('p/due/nonsense')).toBeUndefined()
  })

  it('gives every prefix exactly one trailing slash, so app and app2 never overlap', () => {
    expect(normalizePrefix(undefined)).toBe('')
    expect(normalizePrefix('app')).toBe('app/')
    expect(normalizePrefix('app/')).toBe('app/')
    expect(keyLayout('app2').lease('x').startsWith(keyLayout('app').root)).toBe(false)
  })
})
