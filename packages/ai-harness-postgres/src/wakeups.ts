/** Wakeups: schedule, cancel, due, claim; due and claim compare against the store's time. And the session listings. */
import { assertLogId, checkListSessionsOptions, type SessionListStore, type Wakeup, type WakeupStore } from '@tanstack/ai-harness/store'
import { sqlLimit, wholeDuration, wholeTime } from './sql-arguments.js'
import type { StoreContext } from './context.js'
import type { Row } from './driver-types.js'
import type { Listen } from './notifications.js'

const toWakeup = (row: Row): Wakeup => ({ logId: String(row.log_id), at: Number(row.at) })

export function wakeupStore(ctx: StoreContext, channel: string, listen: Listen | undefined): WakeupStore {
  const { driver, sql, limits } = ctx
  return {
    async schedule(logId, at) {
      assertLogId(logId, limits)
      // Rounded up: a wakeup is "no earlier than at".
      const when = wholeTime(at, 'A wakeup time')
      await ctx.run('wakeup schedule', () => driver.query(sql.scheduleWakeup, [logId, when, channel, ctx.clockParam()]))
    },
    ...(listen && { watch: (listener: () => void) => listen(channel, listener) }),
    async cancel(logId) {
      assertLogId(logId, limits)
      await ctx.run('wakeup cancel', () => driver.query(sql.cancelWakeup, [logId]))
    },
    async due(limit) {
      const max = sqlLimit(limit, "due's limit")
      const rows = await ctx.run('wakeup due', () => driver.query(sql.dueWakeups, [ctx.clockParam(), max]))
      return rows.map(toWakeup)
    },
    async claim(limit, holdMs) {
      const max = sqlLimit(limit, "claim's limit")
      const hold = wholeDuration(holdMs, 'holdMs')
      const rows = await ctx.run('wakeup claim', () => driver.query(sql.claimWakeups, [ctx.clockParam(), max, hold]))
      return rows.map(toWakeup)
    },
  }
}

/** The session listings, each page from an index: the entries' primary key, the wakeups' (at, log_id). */
export function sessionListStore(ctx: StoreContext): SessionListStore {
  const { driver, sql } = ctx
  const page = async (what: string, text: string, options: Parameters<SessionListStore['list']>[0]) => {
    const { after, limit } = checkListSessionsOptions(options)
    const rows = await ctx.run(what, () => driver.query(text, [after ?? '', limit]))
    return rows.map((row) => String(row.log_id))
  }
  return {
    list: (options) => page('session list', sql.listSessions, options),
    waiting: (options) => page('session waiting', sql.waitingSessions, options),
  }
}
