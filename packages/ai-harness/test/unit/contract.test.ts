import { describe, expect, it } from 'vitest'
import { HarnessError, isHarnessError } from '../../src/index.js'
import { createManualClock, LogConflictError, prepareBatch, withRetry } from '../../src/store/index.js'

describe('prepareBatch', () => {
  const limits = { maxRecordBytes: 40, maxBatchBytes: 60 }

  it('returns each record as JSON and the batch size', () => {
    const batch = prepareBatch([{ type: 'a' }, { type: 'b', n: 1 }], limits)
    expect(batch.json).toEqual(['{"type":"a"}', '{"type":"b","n":1}'])
    expect(batch.bytes).toBe(12 + 18)
  })

  it('refuses records without a string type, non-JSON, and over the limits, by code', () => {
    const code = (fn: () => unknown) => {
      try {
        fn()
      } catch (error) {
        return (error as HarnessError).code
      }
      return 'none'
    }
    expect(code(() => prepareBatch([{ kind: 'x' } as never], limits))).toBe('RECORD_INVALID')
    expect(code(() => prepareBatch([{ type: 'x', at: new Date() } as never], limits))).toBe('RECORD_NOT_JSON')
    expect(code(() => prepareBatch([{ type: 'x', pad: 'y'.repeat(30) }], limits))).toBe('RECORD_TOO_LARGE')
    expect(
      code(() =>
        prepareBatch(
          [
            { type: 'x', p: 'y'.repeat(20) },
            { type: 'x', p: 'y'.repeat(20) },
          ],
          limits,
        ),
      ),
    ).toBe('RECORD_TOO_LARGE')
    expect(code(() => prepareBatch([{ type: 'a' }, { type: 'b' }], { ...limits, maxBatchRecords: 1 }))).toBe('RECORD_TOO_LARGE')
  })
})

describe('withRetry', () => {
  const noSleep = async () => {}

  it('retries transient errors with growing, jittered backoff', async () => {
    const delays: number[] = []
    let calls = 0
    const value = await withRetry(
      async () => {
        calls++
        if (calls < 4) throw new Error('ECONNRESET')
        return 'ok'
      },
      { isTransient: () => true, sleep: noSleep, random: () => 1, baseMs: 10, onRetry: (_e, _a, d) => delays.push(d) },
    )
    expect(value).toBe('ok')
    expect(delays).toEqual([10, 20, 40])
  })

  it('never retries a conflict, even when the transient test would say yes', async () => {
    let calls = 0
    await expect(
      withRetry(
        async () => {
          calls++
          throw new LogConflictError('s', 1, 2)
        },
        { isTransient: () => true, sleep: noSleep },
      ),
    ).rejects.toMatchObject({ code: 'LOG_CONFLICT' })
    expect(calls).toBe(1)
  })

  it('gives up after the configured retries', async () => {
    let calls = 0
    await expect(
      withRetry(
        async () => {
          calls++
          throw new Error('503')
        },
        { isTransient: () => true, sleep: noSleep, retries: 2 },
      ),
    ).rejects.toThrow('503')
    expect(calls).toBe(3)
  })
})

describe('errors and clock', () => {
  it('conflicts carry code, expected and actual seq, and say what to do', () => {
    const error = new LogConflictError('s', 3, 5)
    expect(isHarnessError(error, 'LOG_CONFLICT')).toBe(true)
    expect(error).toMatchObject({ expectedSeq: 3, actualNextSeq: 5 })
    expect(error.message).toContain('read the log again')
  })

  it('a manual clock moves only when told', () => {
    const clock = createManualClock(1000)
    expect(clock.now()).toBe(1000)
    clock.advance(500)
    expect(clock.now()).toBe(1500)
    expect(() => clock.advance(-1)).toThrow(RangeError)
  })
})

describe('isHarnessError', () => {
  it('is false for driver errors that carry a string code', () => {
    expect(isHarnessError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe(false)
    expect(isHarnessError(Object.assign(new Error('serialization'), { code: '40001' }))).toBe(false)
    expect(isHarnessError(new HarnessError('LEASE_LOST', 'x'), 'LEASE_LOST')).toBe(true)
  })

  it('lets withRetry retry a driver error with a code', async () => {
    let calls = 0
    const value = await withRetry(
      async () => {
        calls++
        if (calls === 1) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' })
        return 'ok'
      },
      { isTransient: (e) => (e as { code?: string }).code === 'ECONNRESET', sleep: async () => {} },
    )
    expect(value).toBe('ok')
    expect(calls).toBe(2)
  })
})
