import { describe, expect, it } from 'vitest'
import type { RecoveryRow } from '../src/report/result.js'
import { growthOf } from '../src/sections/recovery.js'
import { median, quantile, ratio } from '../src/stats.js'

const row = (store: RecoveryRow['store'], records: number, ms: number, mb: number): RecoveryRow => ({
  store,
  records,
  openFirstMs: ms,
  open: { medianMs: ms, p90Ms: ms, samples: 1 },
  bareRead: { medianMs: ms, p90Ms: ms, samples: 1 },
  ratio: 1,
  peakRssGrowthMB: mb,
  retainedHeapMB: 0,
  bytesPerRecordPeak: 0,
  requestsPerOpen: 1,
})

describe('growth between recovery sizes', () => {
  it('gives time and memory factors from each size to the next of the same store', () => {
    const rows = [row('postgres', 1000, 10, 2), row('postgres', 10_000, 100, 20), row('s3', 1000, 5, 1)]
    expect(growthOf(rows)).toEqual([{ store: 'postgres', from: 1000, to: 10_000, timeFactor: 10, memoryFactor: 10, recordsFactor: 10 }])
  })

  it('leaves a factor out when a side is zero', () => {
    expect(growthOf([row('memory', 1, 1, 0), row('memory', 2, 2, 0)])[0]!.memoryFactor).toBeNull()
  })
})

describe('stats', () => {
  it('takes medians and interpolated quantiles', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([1, 2, 3, 4])).toBe(2.5)
    expect(quantile([0, 10], 0.9)).toBe(9)
    expect(ratio(3, 0)).toBeNull()
  })
})
