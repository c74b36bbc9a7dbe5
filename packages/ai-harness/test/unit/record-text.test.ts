import { afterEach, describe, expect, it, vi } from 'vitest'
import { keepRecordText, keptRecordText, recordWithValueText } from '../../src/contract/record-text.js'
import { prepareBatch } from '../../src/store/index.js'

const limits = { maxRecordBytes: 1_000, maxBatchBytes: 2_000 }
const head = () => ({ type: 'harness.step', toolCallId: 'call_1', name: 'charge' })

describe('a record the runtime made from its own JSON text', () => {
  afterEach(() => vi.restoreAllMocks())

  const values: Array<[string, unknown]> = [
    ['a small object', { chargeId: 'ch_1', amount: 4200, currency: 'eur' }],
    ['integer-like keys (printed first)', { b: 1, 2: 'two', 1: 'one' }],
    ['a lone surrogate and other text', { s: '\ud800 é 😀 "quoted" \n' }],
    ['-0 and big numbers', [-0, 1e21, 0.1 + 0.2]],
    ['a __proto__ key', JSON.parse('{"__proto__": {"x": 1}}')],
    ['null, nesting and empty parts', { a: null, b: [[], {}], c: { d: [true, false] } }],
    ['a string', 'plain'],
  ]
  it.each(values)('keeps the text JSON.stringify gives the record: %s', (_, value) => {
    const record = recordWithValueText(head(), JSON.stringify(value))
    expect(keptRecordText(record)).toBe(JSON.stringify(record))
    expect(record.value).toEqual(JSON.parse(JSON.stringify(value)))
  })

  it('has no value key when the value is undefined', () => {
    const record = recordWithValueText(head(), undefined)
    expect(keptRecordText(record)).toBe('{"type":"harness.step","toolCallId":"call_1","name":"charge"}')
  })

  it('is frozen with everything in it, so its text stays its JSON', () => {
    const record = recordWithValueText(head(), JSON.stringify({ deep: { list: [{ n: 1 }] } })) as unknown as {
      value: { deep: { list: Array<{ n: number }> } }
    }
    expect(Object.isFrozen(record)).toBe(true)
    expect(() => {
      record.value.deep.list[0]!.n = 2
    }).toThrow(TypeError)
    expect(() => {
      record.value.deep.list.push({ n: 3 })
    }).toThrow(TypeError)
  })

  it('reaches a store as its kept text: prepareBatch neither walks nor stringifies it again', () => {
    const record = recordWithValueText(head(), JSON.stringify({ amount: 1 }))
    const stringify = vi.spyOn(JSON, 'stringify')
    const batch = prepareBatch([record], limits)
    expect(stringify).not.toHaveBeenCalled()
    expect(batch.json).toEqual([keptRecordText(record)])
    expect(batch.bytes).toBe(keptRecordText(record)!.length)
  })

  it('is still size-checked against each store’s own limits', () => {
    const record = recordWithValueText(head(), JSON.stringify({ text: 'x'.repeat(990) }))
    expect(() => prepareBatch([record], limits)).toThrow(expect.objectContaining({ code: 'RECORD_TOO_LARGE' }))
    expect(() => prepareBatch([record, record], { maxRecordBytes: 2_000, maxBatchBytes: 1_500 })).toThrow(
      expect.objectContaining({ code: 'RECORD_TOO_LARGE' }),
    )
    expect(() => prepareBatch([record, record], { ...limits, maxRecordBytes: 2_000, maxBatchBytes: 5_000, maxBatchRecords: 1 })).toThrow(
      expect.objectContaining({ code: 'RECORD_TOO_LARGE' }),
    )
  })

  it('gives nothing to an equal record from elsewhere: that one gets every check', () => {
    const kept = recordWithValueText(head(), JSON.stringify({ amount: 1 }))
    const copy = { ...kept, value: { amount: 1 } }
    expect(keptRecordText(copy)).toBeUndefined()
    const stringify = vi.spyOn(JSON, 'stringify')
    expect(prepareBatch([kept, copy], limits).json).toEqual([keptRecordText(kept), JSON.stringify(copy)])
    expect(stringify).toHaveBeenCalled()
    stringify.mockRestore()
    // A batch that mixes kept records with a faulty one is refused as before.
    expect(() => prepareBatch([kept, { type: 'x', at: new Date() } as never], limits)).toThrow(
      expect.objectContaining({ code: 'RECORD_NOT_JSON' }),
    )
    expect(() => prepareBatch([kept, { kind: 'x' } as never], limits)).toThrow(expect.objectContaining({ code: 'RECORD_INVALID' }))
  })

  it('keepRecordText freezes what it keeps', () => {
    const record = keepRecordText({ type: 'app.x', list: [1] }, '{"type":"app.x","list":[1]}')
    expect(Object.isFrozen(record.list)).toBe(true)
  })
})
