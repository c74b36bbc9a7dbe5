import { describe, expect, it } from 'vitest'
import { MAX_TIME_MS } from '@tanstack/ai-harness/store'
import { decodeId, encodeId, keyLayout, MAX_KEY_BYTES, normalizePrefix } from '../src/keys.js'

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
  '\ufffd',
  '\u{1f600}',
  '~',
  '~7e',
]

describe('key layout', () => {
  it('encodes log ids injectively, without "/", at most 3 key bytes a byte, and decodes them back', () => {
    const encoded = lookAlikes.map(encodeId)
    expect(new Set(encoded).size).toBe(lookAlikes.length)
    for (const [i, e] of encoded.entries()) {
      expect(e).not.toContain('/')
      expect(e).toMatch(/^[A-Za-z0-9_~-]+$/)
      expect(e.length).toBeLessThanOrEqual(3 * Buffer.byteLength(lookAlikes[i]!))
      expect(decodeId(e)).toBe(lookAlikes[i])
    }
    expect(encodeId('a:b')).toBe('a~3ab')
    expect(encodeId('\u00e9')).toBe('~c3~a9')
  })

  it("never makes one log's prefix a prefix of another log's keys", () => {
    const keys = keyLayout('ns')
    for (const a of lookAlikes) {
      for (const b of lookAlikes) {
        if (a !== b) expect(keys.batch(b, 0, 1).startsWith(keys.logPrefix(a))).toBe(false)
      }
    }
  })

  it('pads generations and batch numbers so that key order is (generation, batch) order', () => {
    const keys = keyLayout('')
    const slots = [0, 1, 9, 10, 12345].flatMap((gen) => [1, 2, 9, 10, 99, 100, 1000, 123456789].map((batch) => ({ gen, batch })))
    const sorted = slots.map((s) => keys.batch('s', s.gen, s.batch)).sort()
    expect(sorted.map((k) => keys.slotOf('s', k))).toEqual(slots)
    expect(keys.slotOf('s1', keys.batch('s', 0, 1))).toBeUndefined()
  })

  it('reads due time and log id back from a due key alone, in time order', () => {
    const keys = keyLayout('p/')
    const a = keys.due(Date.UTC(2026, 0, 1), 'a/b c', 't1')
    const b = keys.due(999, 'z', 't2')
    const c = keys.due(MAX_TIME_MS, 'z', 't3')
    expect(keys.parseDue(a)).toEqual({ at: Date.UTC(2026, 0, 1), logId: 'a/b c', tag: 't1' })
    expect(keys.parseDue(c)).toEqual({ at: MAX_TIME_MS, logId: 'z', tag: 't3' })
    expect([c, a, b].sort()).toEqual([b, a, c])
    expect(keys.parseDue('p/due/nonsense')).toBeUndefined()
  })

  it('gives every prefix exactly one trailing slash, so app and app2 never overlap', () => {
    expect(normalizePrefix(undefined)).toBe('')
    expect(normalizePrefix('app')).toBe('app/')
    expect(normalizePrefix('app/')).toBe('app/')
    expect(keyLayout('app2').lease('x').startsWith(keyLayout('app').root)).toBe(false)
  })

  it('declares the longest id whose every key fits in 1024 bytes, even when each byte is escaped', () => {
    const keys = keyLayout('some/prefix')
    const id = ':'.repeat(keys.maxLogIdBytes)
    const longest = [
      keys.due(MAX_TIME_MS, id, keys.tag(MAX_TIME_MS, 'f'.repeat(12))),
      keys.batch(id, 99_999_999, 999_999_999_999),
      keys.wakeup(id),
      keys.lease(id),
    ]
    for (const key of longest) expect(Buffer.byteLength(key)).toBeLessThanOrEqual(MAX_KEY_BYTES)
    expect(Buffer.byteLength(keys.due(MAX_TIME_MS, `${id}:`, keys.tag(MAX_TIME_MS, 'f'.repeat(12))))).toBeGreaterThan(MAX_KEY_BYTES)
  })
})
