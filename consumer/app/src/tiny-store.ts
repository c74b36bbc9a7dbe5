/**
 * A store written the way a store author outside this repository writes one: a log per
 * session in a Map, built only from the public exports. No leases and no wakeups, so
 * one host drives each session and there are no workers.
 */
// Store-author names; they are also exported by the store entry point '@tanstack/ai-harness/store'.
import type { HarnessStore } from '@tanstack/ai-harness'
import { assertLogId, type LogEntry, LogConflictError, prepareBatch, type StoreLimits } from '@tanstack/ai-harness/store'

/** One "database": each log is the JSON text of its records, so nothing is shared with callers. */
export type TinyData = Map<string, string[]>

export const TINY_LIMITS: StoreLimits = { maxRecordBytes: 64 * 1024, maxBatchBytes: 256 * 1024 }

export function tinyStore(data: TinyData): HarnessStore {
  return {
    limits: TINY_LIMITS,
    async append(logId, expectedSeq, records) {
      assertLogId(logId, TINY_LIMITS)
      const { json } = prepareBatch(records, TINY_LIMITS) // every check before any write
      if (json.length === 0) return { nextSeq: expectedSeq }
      const log = data.get(logId) ?? []
      const next = log.length + 1
      if (expectedSeq !== next) throw new LogConflictError(logId, expectedSeq, next)
      data.set(logId, [...log, ...json]) // one assignment: the whole batch or nothing
      return { nextSeq: next + json.length }
    },
    async read(logId, options = {}) {
      assertLogId(logId, TINY_LIMITS)
      const after = Math.max(0, Math.floor(options.after ?? 0))
      const log = data.get(logId) ?? []
      const end = options.limit === undefined ? log.length : Math.min(log.length, after + Math.max(0, options.limit))
      const entries: LogEntry[] = []
      for (let seq = after + 1; seq <= end; seq++) entries.push({ seq, record: JSON.parse(log[seq - 1]!) })
      return entries
    },
    async delete(logId) {
      assertLogId(logId, TINY_LIMITS)
      data.delete(logId)
    },
  }
}

/** Every byte the store keeps, for the suite's checks that refused data left no trace. */
export const dumpTiny = (data: TinyData): string => JSON.stringify([...data])
