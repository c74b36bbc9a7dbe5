import { median, quantile, round } from '../stats.js'
import type { Timing } from './result.js'

export function timing(samples: readonly number[]): Timing {
  return { medianMs: round(median(samples), 4), p90Ms: round(quantile(samples, 0.9), 4), samples: samples.length }
}
