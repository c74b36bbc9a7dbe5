import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { seedPageStatus } from '../support/seed.js'

describe('whether the seed page tests run, skip or fail', () => {
  const dir = mkdtempSync(join(tmpdir(), 'seed-status-'))
  const present = join(dir, 'durable-tools.md')
  writeFileSync(present, '# page\n')
  const missing = join(dir, 'missing.md')

  it('they run when the page is beside the repo, with or without CI', () => {
    expect(seedPageStatus(present, {})).toEqual({ state: 'run' })
    expect(seedPageStatus(present, { CI: 'true' })).toEqual({ state: 'run' })
  })

  it('without the page and without CI they are skipped, and the reason names the missing path', () => {
    for (const env of [{}, { CI: '' }, { CI: 'false' }, { CI: '0' }]) {
      const status = seedPageStatus(missing, env)
      expect(status.state, JSON.stringify(env)).toBe('skip')
      expect(status).toMatchObject({ reason: expect.stringContaining(missing) })
    }
  })

  it('without the page and with CI set they fail', () => {
    for (const CI of ['true', '1', 'yes']) expect(seedPageStatus(missing, { CI }).state, CI).toBe('fail')
  })
})
