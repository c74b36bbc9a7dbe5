import { HarnessError } from './errors.js'
import type { HarnessStore, LogEntry } from './types.js'

/**
 * Reads a whole log page by page, so no single request is unbounded. A short page is
 * not the end (a store may cut pages at its own size): only an empty page is.
 */
export async function readAll(store: HarnessStore, logId: string, pageSize = 1000, after = 0): Promise<LogEntry[]> {
  const entries: LogEntry[] = []
  await forEachPage(
    store,
    logId,
    pageSize,
    (page) => {
      entries.push(...page)
    },
    after,
  )
  return entries
}

/**
 * Calls `onPage` with each page of the log after `after`, in order, until an empty page.
 * Checks that pages are dense and ascending, so a store that skips or repeats an entry
 * fails loudly (`SESSION_CORRUPT`) instead of losing records.
 *
 * With `maxPageSize`, each full page doubles the next one's limit up to it: a short log
 * costs the same first page, and a long one far fewer round trips (each page of a
 * networked store is a request or more), while no page holds more than `maxPageSize`.
 */
export async function forEachPage(
  store: HarnessStore,
  logId: string,
  pageSize: number,
  onPage: (page: LogEntry[]) => void,
  after = 0,
  maxPageSize = pageSize,
): Promise<void> {
  let next = after + 1
  let limit = pageSize
  for (;;) {
    const page = await store.read(logId, { after: next - 1, limit })
    if (page.length >= limit) limit = Math.min(maxPageSize, limit * 2)
    if (page.length === 0) return
    for (const entry of page) {
      if (entry.seq !== next) {
        throw new HarnessError(
          'SESSION_CORRUPT',
          `The store returned seq ${entry.seq} where seq ${next} of log ${JSON.stringify(logId)} belongs: its read skips or repeats entries. Fix the store's read (see the paging rule of the store contract).`,
        )
      }
      next++
    }
    onPage(page)
  }
}
