import type { HarnessStore, LogEntry } from './types.js'

/** Reads a whole log page by page, so no single request is unbounded. */
export async function readAll(store: HarnessStore, logId: string, pageSize = 1000): Promise<LogEntry[]> {
  const entries: LogEntry[] = []
  let after = 0
  for (;;) {
    const page = await store.read(logId, { after, limit: pageSize })
    entries.push(...page)
    if (page.length < pageSize) return entries
    after = page[page.length - 1]!.seq
  }
}
