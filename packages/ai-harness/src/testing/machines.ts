import type { Clock, HarnessStore, LogEntry, LogRecord } from '../contract/types.js'
import type { Harness } from '../runtime/harness.js'
import { createHost, type Host } from '../runtime/host.js'
import { type CrashableStore, crashable } from './crashable-store.js'

/**
 * The lease time of a test's hosts: long enough that no lease runs out while a test runs,
 * unless the test moves its manual clock past it (to let another host take a session).
 */
export const TEST_LEASE_MS = 30_000

/** One machine of a test, as a process would be: a store instance that can crash, and a host on it. */
export interface Machine {
  readonly store: CrashableStore
  readonly host: Host
}

export interface MachineOptions {
  /** The harnesses its host runs. */
  harnesses: Harness | Harness[]
  /** The clock every machine of the test shares, usually a manual one. */
  clock: Clock
  /** The host's id in the log. */
  hostId: string
}

/**
 * Starts a machine on `store` (a fresh instance on the test's data): the store is made
 * crashable, and its host holds leases for {@link TEST_LEASE_MS}.
 */
export function startMachine(store: HarnessStore, options: MachineOptions): Machine {
  const machineStore = crashable(store)
  const host = createHost({
    store: machineStore,
    harnesses: options.harnesses,
    clock: options.clock,
    leaseMs: TEST_LEASE_MS,
    hostId: options.hostId,
  })
  return { store: machineStore, host }
}

/** The records of one type in a log, in order. */
export function recordsOf(entries: readonly LogEntry[], type: string): LogRecord[] {
  return entries.map((e) => e.record).filter((r) => r.type === type)
}

/** The entries (seq and record) of one type in a log, in order. */
export function entriesOf(entries: readonly LogEntry[], type: string): LogEntry[] {
  return entries.filter((e) => e.record.type === type)
}
