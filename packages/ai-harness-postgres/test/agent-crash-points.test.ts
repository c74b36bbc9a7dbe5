import { PGlite } from '@electric-sql/pglite'
import { createManualClock, type CrashVariant, type CrashWorld, enumerateAgentCrashPoints } from '@tanstack/ai-harness/testing'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { postgresStore } from '../src/index.js'
import { freshSchema, pgConfig } from './support.js'

// The agent-tool crash-point enumeration (issue 20) on PGlite and on PostgreSQL: each
// crash point runs on a schema of its own, dropped once the point is checked.
const lite = new PGlite()
const pool = new pg.Pool({ ...pgConfig(), max: 4 })
pool.on('error', () => {})
afterAll(async () => {
  await lite.close()
  await pool.end()
})

const clients = { PGlite: lite, PostgreSQL: pool } as const
// PostgreSQL answers over the network: points run side by side while each waits for it.
const concurrency = { PGlite: 1, PostgreSQL: 4 } as const

function worldOn(client: PGlite | pg.Pool) {
  const drop = (sql: string) => (client instanceof PGlite ? client.query(sql) : client.query(sql))
  return async (): Promise<CrashWorld> => {
    const clock = createManualClock()
    const schema = freshSchema('agent_crash')
    const open = async () => postgresStore({ client, schema, clock })
    await (await open()).migrate()
    return {
      clock,
      openStore: open,
      close: async () => void (await drop(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)),
    }
  }
}

describe.each(Object.keys(clients) as Array<keyof typeof clients>)('agent tool at every crash point on %s', (name) => {
  describe.each([1, 2] as const)('%i level(s)', (depth) => {
    it.each(['same-time', 'staggered', 'two-workers'] as CrashVariant[])('%s', async (variant) => {
      const report = await enumerateAgentCrashPoints({ world: worldOn(clients[name]), depth, variant, concurrency: concurrency[name] })
      if (process.env.CRASH_REPORT) {
        const cut = report.points.filter((p) => p.outcome === 'cut').length
        console.log(`${name} depth ${depth} ${variant}: ${report.writes} writes, ${cut} points cut`)
      }
      expect(report.failures).toEqual([])
      expect(report.points.length).toBe(report.writes)
    })
  })
})
