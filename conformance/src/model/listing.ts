import assert from 'node:assert/strict'
import { compareCodePoints, type SessionListStore } from '@tanstack/ai-harness/store'

/**
 * Every id of a listing (`list` or `waiting`), page by page with `after` = the last id of
 * the page before, until an empty page. Checks each page: at most `limit` ids, each after
 * the cursor, in code point order, none twice.
 */
export async function listAll(sessions: SessionListStore, which: 'list' | 'waiting', limit: number, what: string): Promise<string[]> {
  const out: string[] = []
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 100_000, `${what}: sessions.${which} never reached an empty page`)
    const after = out.at(-1)
    const page = await sessions[which](after === undefined ? { limit } : { after, limit })
    assert.ok(Array.isArray(page), `${what}: sessions.${which} must return an array of ids`)
    assert.ok(page.length <= limit, `${what}: a page of ${page.length} ids for limit ${limit}`)
    if (page.length === 0) return out
    page.forEach((id, i) => {
      const before = i === 0 ? after : page[i - 1]
      if (before !== undefined && compareCodePoints(id, before) <= 0) {
        assert.fail(
          `${what}: sessions.${which} returned ${JSON.stringify(id)} after ${JSON.stringify(before)}${i === 0 ? ' (the cursor)' : ''}: ids come once each, in code point order, strictly after the cursor`,
        )
      }
    })
    out.push(...page)
  }
}
