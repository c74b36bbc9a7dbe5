import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { Database } from './instances.js'
import { pgConfig } from './support.js'

const GATE_CLASS = 7741

/**
 * A gate inside the entries table of `schema` (pg only): an INSERT of a record holding
 * `"gate":true` stops in a trigger, after the statement's checks and with its locks held,
 * until `open()`. So a test can force "this append is in flight" and look at what others
 * do meanwhile, by the locks they wait for, not by timing.
 */
export async function gate(db: Database, schema: string) {
  const key = Math.floor(Math.random() * 2 ** 31)
  const holder = new pg.Client(pgConfig())
  await holder.connect()
  await holder.query('SELECT pg_advisory_lock($1, $2)', [GATE_CLASS, key])
  await db.sql(
    `CREATE FUNCTION "${schema}".gate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock_shared(${GATE_CLASS}, ${key}); RETURN NEW; END $$`,
  )
  await db.sql(
    `CREATE TRIGGER gate BEFORE INSERT ON "${schema}".harness_log_entries FOR EACH ROW WHEN (NEW.record LIKE '%"gate":true%') EXECUTE FUNCTION "${schema}".gate()`,
  )
  let stopped: number | undefined
  const until = async (what: string, condition: () => Promise<boolean>) => {
    for (let i = 0; i < 2000; i++) {
      if (await condition()) return
      await sleep(5)
    }
    throw new Error(`gate: gave up waiting until ${what}`)
  }
  return {
    /** Resolves once an append stands at the gate. */
    async waitUntilStopped() {
      await until('an append stops at the gate', async () => {
        const rows = await db.sql(`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objid = $2 AND NOT granted`, [
          GATE_CLASS,
          key,
        ])
        stopped = rows[0] === undefined ? undefined : Number(rows[0].pid)
        return stopped !== undefined
      })
    },
    /** Resolves once `work` finished, or waits for a lock the stopped append holds. */
    async waitUntilBlockedOrDone(work: Promise<unknown>) {
      let done = false
      const finish = () => {
        done = true
      }
      work.then(finish, finish)
      await until('the other call waits for the append or ends', async () => {
        if (done) return true
        const rows = await db.sql('SELECT 1 FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))', [stopped])
        return rows.length > 0
      })
    },
    async open() {
      await holder.query('SELECT pg_advisory_unlock($1, $2)', [GATE_CLASS, key])
      await holder.end()
    },
  }
}
