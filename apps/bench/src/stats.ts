/** Small statistics for timings. Medians, not means: one GC pause must not move a result. */

export function median(values: readonly number[]): number {
  return quantile(values, 0.5)
}

/** Linear interpolation between the closest ranks; NaN for no values. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const at = (sorted.length - 1) * q
  const low = Math.floor(at)
  const high = Math.ceil(at)
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (at - low)
}

export function max(values: readonly number[]): number {
  return values.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY)
}

/** `a / b`, rounded for reports; null when either side is missing. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null
  return round(a / b, 3)
}

export function round(value: number, digits = 3): number {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}

/** Milliseconds since `start` (a `performance.now()` value). */
export const since = (start: number) => performance.now() - start
