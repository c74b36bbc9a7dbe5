import {
  type HarnessStore,
  type LeaseStore,
  LogConflictError,
  type LogEntry,
  type LogRecord,
  prepareBatch,
  type WakeupStore,
} from '@tanstack/ai-harness'
import { createMemoryData, dumpMemoryData, type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import type { ConformanceOptions, StoreContext } from '@tanstack/ai-harness-conformance'

/**
 * Stores that are each wrong in exactly one way, built by changing one method of the
 * memory store. The suite is only as good as the broken stores it catches.
 */
type Memory = ReturnType<typeof memoryStore>
type Breaker = (store: Memory, data: MemoryData, extra: { rejected: string[] }) => HarnessStore

const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

export const brokenStores: Record<string, { breaks: string[]; make: Breaker }> = {
  'no compare-and-set': {
    breaks: ['log.append.stale', 'log.append.future', 'log.append.retry-landed', 'log.race.same-seq'],
    make: (store, data) => ({
      ...store,
      async append(logId, _expectedSeq, records) {
        const batch = prepareBatch(records, store.limits)
        await tick()
        const log = data.logs.get(logId) ?? []
        log.push(...batch.json)
        data.logs.set(logId, log)
        return { nextSeq: log.length + 1 }
      },
    }),
  },
  'half a batch written when a record is refused': {
    breaks: ['log.atomic.refused-batch'],
    make: (store, data) => ({
      ...store,
      async append(logId, expectedSeq, records) {
        await tick()
        const log = data.logs.get(logId) ?? []
        if (log.length + 1 !== expectedSeq) throw new LogConflictError(logId, expectedSeq, log.length + 1)
        data.logs.set(logId, log)
        for (const record of records) {
          prepareBatch([record], store.limits)
          log.push(JSON.stringify(record))
        }
        return { nextSeq: log.length + 1 }
      },
    }),
  },
  'seq compared as text': {
    breaks: ['log.read.ordering'],
    make: (store) => ({
      ...store,
      async read(logId, options = {}) {
        const all = await store.read(logId)
        const after = String(options.after ?? 0)
        const sorted = all.filter((e) => String(e.seq) > after).sort((a, b) => (String(a.seq) < String(b.seq) ? -1 : 1))
        return sorted.slice(0, options.limit ?? sorted.length)
      },
    }),
  },
  'stale reads after append': {
    breaks: ['log.read.your-writes'],
    make: (store) => {
      // A replica that serves what it saw one read ago.
      const lagging = new Map<string, LogEntry[]>()
      return {
        ...store,
        async read(logId, options = {}) {
          const fresh = await store.read(logId)
          const served = lagging.get(logId) ?? fresh
          lagging.set(logId, fresh)
          const after = options.after ?? 0
          const page = served.filter((e) => e.seq > after)
          return page.slice(0, options.limit ?? page.length)
        },
      }
    },
  },
  'a batch keyed by its first seq': {
    breaks: ['log.append.stale-inside-batch'],
    make: (store, data) => {
      const starts = new Map<string, Set<number>>()
      return {
        ...store,
        async append(logId, expectedSeq, records) {
          const batch = prepareBatch(records, store.limits)
          if (batch.json.length === 0) return { nextSeq: expectedSeq }
          await tick()
          const log = data.logs.get(logId) ?? []
          const taken = starts.get(logId) ?? new Set<number>()
          // Only a batch that starts at the same seq collides; the log is rewritten from there.
          if (taken.has(expectedSeq) || expectedSeq > log.length + 1) throw new LogConflictError(logId, expectedSeq)
          taken.add(expectedSeq)
          starts.set(logId, taken)
          log.splice(expectedSeq - 1, batch.json.length, ...batch.json)
          data.logs.set(logId, log)
          return { nextSeq: expectedSeq + batch.json.length }
        },
      }
    },
  },
  'keeps the bytes of a refused batch': {
    breaks: ['log.atomic.refused-batch'],
    make: (store, _data, extra) => ({
      ...store,
      async append(logId, expectedSeq, records) {
        try {
          return await store.append(logId, expectedSeq, records)
        } catch (error) {
          // A "dead letter" copy: exactly what a store must never keep.
          extra.rejected.push(JSON.stringify(records, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)))
          throw error
        }
      },
    }),
  },
  'a stale owner can still renew': {
    breaks: ['lease.stale-renew'],
    make: (store, data) => {
      const leases: LeaseStore = {
        ...store.leases,
        async renew(lease, ttlMs) {
          await tick()
          const current = data.leases.get(lease.logId)
          if (!current) throw new Error('no lease')
          current.expiresAt = Math.max(current.expiresAt, Date.now()) + ttlMs
          return { ...lease, expiresAt: current.expiresAt }
        },
      }
      return { ...store, leases }
    },
  },
  'fences that do not increase': {
    breaks: ['lease.fences-increase', 'lease.release', 'lease.expiry'],
    make: (store) => {
      const leases: LeaseStore = {
        ...store.leases,
        async acquire(logId, owner, ttlMs) {
          const lease = await store.leases.acquire(logId, owner, ttlMs)
          return { ...lease, fence: 1 }
        },
      }
      return { ...store, leases }
    },
  },
  'claims that are not atomic': {
    breaks: ['wakeup.claim-race'],
    make: (store) => {
      const wakeups: WakeupStore = {
        ...store.wakeups,
        async claim(limit, holdMs) {
          const due = await store.wakeups.due(limit)
          await tick()
          for (const w of due) await store.wakeups.schedule(w.logId, Date.now() + holdMs + 1e12)
          return due
        },
      }
      return { ...store, wakeups }
    },
  },
}

/** Conformance options for a store built by `make`, one memory data set per namespace. */
export function optionsFor(name: string, make: Breaker, overrides: Partial<ConformanceOptions> = {}): ConformanceOptions {
  const databases = new Map<string, { data: MemoryData; rejected: string[] }>()
  const db = (namespace: string) => {
    let entry = databases.get(namespace)
    if (!entry) {
      entry = { data: createMemoryData(), rejected: [] }
      databases.set(namespace, entry)
    }
    return entry
  }
  return {
    name,
    createStore: ({ namespace, clock }: StoreContext) => {
      const { data, rejected } = db(namespace)
      return make(memoryStore({ data, clock }), data, { rejected })
    },
    dump: async ({ namespace }) => dumpMemoryData(db(namespace).data) + db(namespace).rejected.join('\n'),
    cleanup: async ({ namespace }) => void databases.delete(namespace),
    ...overrides,
  }
}

export const correct: Breaker = (store) => store

export type { LogRecord }
