import type { HarnessStore } from '@tanstack/ai-harness'
import type { RequestCounter } from './requests.js'

export type StoreName = 'memory' | 'pglite' | 'postgres' | 'dynamodb' | 's3'

export const STORE_NAMES: readonly StoreName[] = ['memory', 'pglite', 'postgres', 'dynamodb', 's3']

/** What a recovery child needs to reach the same data from another process. */
export type ChildConnection =
  | { store: 'memory' }
  | { store: 'pglite'; dataDir: string; schema: string }
  | { store: 'postgres'; schema: string }
  | { store: 'dynamodb'; endpoint: string; tableName: string; namespace: string }
  | { store: 's3'; endpoint: string; bucket: string; prefix: string }

/**
 * One store under test, with the client it runs on. Every measurement of a store is
 * paired with a baseline through the same client: a bare conditional write of the
 * same bytes, which is the least any durable store must do.
 */
export interface Target {
  readonly name: StoreName
  /** Counts every request the client sends, for the store and the baseline alike. */
  readonly requests: RequestCounter
  /** A new store instance on the shared client (a new process would do the same). */
  createStore(): HarnessStore
  /** One conditional write of `bytes` at a fresh `key`: insert-if-absent, one request. */
  bareWrite(key: string, bytes: string): Promise<void>
  /** How a child process reaches this target's data, or undefined when it cannot (memory). */
  childConnection(): ChildConnection
  /** Drops everything this run created (schema, table, bucket, prefix) and closes clients. */
  close(): Promise<void>
}
