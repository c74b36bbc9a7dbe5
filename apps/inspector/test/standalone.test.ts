import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createHost } from '@tanstack/ai-harness'
import { drain } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { loadHarnesses } from '../src/load-harnesses.js'
import { openStore } from '../src/open-store.js'
import { startInspector } from '../src/server.js'
import { APP_SECRET, harnesses } from './fixtures/app-harnesses.js'

const here = dirname(fileURLToPath(import.meta.url))
const PG = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

describe('the standalone inspector', () => {
  const closes: Array<() => Promise<void>> = []
  afterAll(async () => {
    for (const close of closes) await close()
  })

  /** An app's session parked on a question, and the answer a person sends through an inspector on `host`. */
  async function answerThrough(inspectorHarnesses: Parameters<typeof createHost>[0]['harnesses']) {
    const store = memoryStore()
    await drain((await createHost({ store, harnesses }).open({ sessionId: 's-1' })).send('go'))
    const inspector = await startInspector({
      host: createHost({ store, harnesses: inspectorHarnesses }),
      token: 't0k3n-for-the-test',
      onError: () => {},
    })
    closes.push(() => inspector.close())
    const origin = inspector.url.replace(/\/#.*/, '')
    const headers = { authorization: 'Bearer t0k3n-for-the-test', 'content-type': 'application/json' }
    const view = (await (await fetch(`${origin}/api/sessions/s-1`, { headers })).json()) as { questions: Array<{ questionId: string }> }
    const response = await fetch(`${origin}/api/sessions/s-1/answer`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ questionId: view.questions[0]!.questionId, answer: { note: `the key is ${APP_SECRET}` } }),
    })
    const answers = (await store.read('s-1')).filter((e) => e.record.type === 'harness.answer')
    return { status: response.status, code: ((await response.json()) as { code: string }).code, answers }
  }

  it("without the app's harnesses it refuses an answer it cannot check, instead of logging a secret the app's host refuses", async () => {
    expect(await answerThrough([])).toEqual({ status: 501, code: 'CAPABILITY_MISSING', answers: [] })
  })

  it('with the harnesses of --harnesses <module> it checks the answer as the app does: RECORD_SECRET, nothing logged', async () => {
    const loaded = await loadHarnesses(join(here, 'fixtures', 'app-harnesses.ts'))
    expect(loaded.map((h) => h.name)).toEqual(['app'])
    expect(await answerThrough(loaded)).toEqual({ status: 400, code: 'RECORD_SECRET', answers: [] })
    await expect(loadHarnesses(join(here, 'browser.ts'))).rejects.toThrow(/exports no harnesses/)
  })

  it('opens a PostgreSQL schema read-only: a mistyped schema is an error and is not created, nor are tables', async () => {
    const admin = new pg.Pool({ connectionString: PG, max: 1 })
    closes.push(() => admin.end())
    const schema = `inspector_typo_${process.pid}_${Date.now()}`
    await expect(openStore(`${PG}?schema=${schema}`)).rejects.toThrow(/no schema .* creates nothing/)
    expect((await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rows).toEqual([])
    // A schema without harness tables: an error too, and still no tables.
    await admin.query(`CREATE SCHEMA "${schema}"`)
    closes.unshift(async () => void (await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)))
    await expect(openStore(`${PG}?schema=${schema}`)).rejects.toThrow(/no harness tables/)
    const tables = await admin.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema])
    expect(tables.rows).toEqual([])
  })
})
