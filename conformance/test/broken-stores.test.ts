import { allCases, runConformanceCases } from '@tanstack/ai-harness-conformance'
import { describe, expect, it } from 'vitest'
import { brokenStores, correct, optionsFor } from './broken-stores.js'

const failedIds = (results: Awaited<ReturnType<typeof runConformanceCases>>) =>
  results.filter((r) => r.status === 'failed').map((r) => r.id)

describe('the suite catches each broken store', () => {
  it('passes every case on the correct memory store, so the failures below are the breakage', async () => {
    const results = await runConformanceCases(optionsFor('memory', correct))
    expect(failedIds(results)).toEqual([])
    expect(results.map((r) => r.id)).toEqual(allCases().map((c) => c.id))
  })

  for (const [name, { breaks, make }] of Object.entries(brokenStores)) {
    it(`fails "${name}" on ${breaks.join(', ')}`, async () => {
      const results = await runConformanceCases(optionsFor(name, make))
      const failed = failedIds(results)
      for (const id of breaks) expect(failed, `${name} should fail ${id}`).toContain(id)
    })
  }
})

describe('declare or fail', () => {
  const withoutLeasesAndWakeups = optionsFor('no leases', (store) => ({ ...store, leases: undefined, wakeups: undefined }))

  it('fails lease and wakeup cases of a store that leaves them out without saying so', async () => {
    const results = await runConformanceCases(withoutLeasesAndWakeups)
    const failed = failedIds(results)
    expect(failed).toContain('lease.acquire.exclusive')
    expect(failed).toContain('wakeup.claim')
    const needsLeasesOrWakeups = new Set(
      allCases()
        .filter((c) => c.requires?.some((need) => need === 'leases' || need === 'wakeups'))
        .map((c) => c.id),
    )
    expect(new Set(failed)).toEqual(needsLeasesOrWakeups)
  })

  it('reports declared gaps as skipped with the stated reason, never as passed', async () => {
    const results = await runConformanceCases({
      ...withoutLeasesAndWakeups,
      skip: { leases: 'single-host store', wakeups: 'no scheduler' },
    })
    const lease = results.find((r) => r.id === 'lease.race')
    expect(lease).toMatchObject({ status: 'skipped', reason: 'single-host store' })
    expect(results.find((r) => r.id === 'wakeup.due')).toMatchObject({ status: 'skipped', reason: 'no scheduler' })
    expect(failedIds(results)).toEqual([])
    const passed = results.filter((r) => r.status === 'passed').map((r) => r.id)
    expect(passed.some((id) => id.startsWith('lease.') || id.startsWith('wakeup.'))).toBe(false)
    expect(passed).toContain('durable.cut-batch.rules')
  })

  it('fails a run with an unknown skip key', async () => {
    const results = await runConformanceCases({ ...optionsFor('typo', correct), skip: { lease: 'typo' } as never })
    expect(results).toHaveLength(1)
    expect(results[0]).toMatchObject({ id: 'options', status: 'failed' })
  })

  it('fails a skip declared without a reason', async () => {
    const results = await runConformanceCases({ ...optionsFor('no reason', correct), skip: { races: '' } })
    expect(results[0]).toMatchObject({ id: 'options', status: 'failed' })
  })

  it('fails the dump cases when a store gives no dump and does not declare it', async () => {
    const results = await runConformanceCases(
      { ...optionsFor('no dump', correct), dump: undefined },
      { only: ['log.atomic.refused-batch'] },
    )
    expect(failedIds(results)).toEqual(['log.atomic.refused-batch'])
  })
})
