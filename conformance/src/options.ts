import type { Clock, HarnessStore, StoreLimits } from '@tanstack/ai-harness'

/** What a store may leave out. Each needs a reason; an undeclared gap fails. */
export const SKIP_KEYS = ['leases', 'wakeups', 'dump', 'races'] as const
export type SkipKey = (typeof SKIP_KEYS)[number]

export interface StoreContext {
  /** Unique per case: put every table, key or prefix of the case under it. */
  readonly namespace: string
  /** The case's clock. Leases and wakeups must read time from it. */
  readonly clock: Clock
}

export interface ConformanceOptions {
  /** Shown in test names, e.g. 'postgres (pg)'. */
  name: string
  /**
   * Opens the store for a namespace. Called several times for one namespace by the
   * race cases: each call must behave as an independent process with its own
   * connection, on the same data.
   */
  createStore: (context: StoreContext) => HarnessStore | Promise<HarnessStore>
  /**
   * Every byte the store keeps for the namespace (rows, items, objects), as text.
   * The suite searches it to prove that refused data left no trace.
   */
  dump?: (context: { namespace: string }) => Promise<string | Uint8Array>
  /** Called after each case, e.g. to drop the namespace's tables. */
  cleanup?: (context: { namespace: string }) => Promise<void>
  /**
   * The limits the store declares. When given, the store's own `limits` must equal
   * them. Default: the store's `limits`.
   */
  limits?: StoreLimits
  /** Capabilities the store leaves out, each with the reason: `{ leases: 'no row locks' }`. */
  skip?: Partial<Record<SkipKey, string>>
  /** Writers in the race cases. Default 8. */
  concurrency?: number
  /** Per-case timeout in ms for vitest. Default 60 000. */
  timeoutMs?: number
}
