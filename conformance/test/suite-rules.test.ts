import { allCases, type CaseResult, runConformanceCases } from '@tanstack/ai-harness-conformance'
import { type HarnessStore, MIN_STORE_LIMITS } from '@tanstack/ai-harness/store'
import { describe, expect, it } from 'vitest'
import { brokenStores, correct, optionsFor } from './broken-stores.js'
import { fileStoreOptions } from './custom-store/file-store-options.js'
import { allowedVariations } from './allowed-variations.js'
import { failures } from './prove-broken-stores.js'

const order = allCases().map((c) => c.id)
const failedIds = (results: readonly CaseResult[]) => results.filter((r) => r.status === 'failed').map((r) => r.id)
const idsRequiring = (...needs: string[]) =>
  allCases()
    .filter((c) => c.requires?.some((need) => needs.includes(need)))
    .map((c) => c.id)
const messageOf = (result: CaseResult | undefined) => String((result?.error as Error)?.message ?? result?.error)

describe('the correct memory store', () => {
  it('passes every case, so the failures of the broken stores are their breakage', async () => {
    const results = await runConformanceCases(optionsFor('memory', correct))
    expect(failures(results)).toEqual([])
    expect(results.map((r) => r.id)).toEqual(order)
  })
})

describe('what a store may do differently passes', () => {
  for (const [name, make] of Object.entries(allowedVariations)) {
    it(name, async () => {
      const results = await runConformanceCases(optionsFor(name, make))
      expect(failures(results)).toEqual([])
    })
  }
})

describe('a store as a class', () => {
  it('keeps its methods called on the store itself, private fields included', async () => {
    let opened = 0
    let closed = 0
    class ClassStore {
      readonly #inner: HarnessStore
      constructor(inner: HarnessStore) {
        this.#inner = inner
        opened++
      }
      get limits() {
        return this.#inner.limits
      }
      append(...args: Parameters<HarnessStore['append']>) {
        return this.#inner.append(...args)
      }
      read(...args: Parameters<HarnessStore['read']>) {
        return this.#inner.read(...args)
      }
      delete(logId: string) {
        return this.#inner.delete(logId)
      }
      async close() {
        await this.#inner.close?.()
        closed++
      }
    }
    const results = await runConformanceCases(
      optionsFor('class', (store) => new ClassStore(store), { skip: { leases: 'a class without', wakeups: 'a class without' } }),
      {
        only: ['log.append.first-batch', 'log.read.paging', 'log.delete.large'],
      },
    )
    expect(failures(results)).toEqual([])
    expect(results.map((r) => r.status)).toEqual(['passed', 'passed', 'passed'])
    expect(closed, 'every instance was closed, on itself').toBe(opened)
  })
})

describe('declare or fail', () => {
  const withoutLeasesAndWakeups = optionsFor('no leases', (store) => ({ ...store, leases: undefined, wakeups: undefined }))

  it('fails exactly the lease and wakeup cases of a store that leaves them out without saying so', async () => {
    const results = await runConformanceCases(withoutLeasesAndWakeups)
    expect(failedIds(results)).toEqual(idsRequiring('leases', 'wakeups'))
    expect(messageOf(results.find((r) => r.id === 'lease.expiry'))).toContain("declare skip: { leases: 'the reason' }")
  })

  it('reports declared gaps as skipped with the stated reason, never as passed', async () => {
    const results = await runConformanceCases({
      ...withoutLeasesAndWakeups,
      skip: { leases: 'single-host store', wakeups: 'no scheduler' },
    })
    expect(results.find((r) => r.id === 'lease.race')).toMatchObject({ status: 'skipped', reason: 'single-host store' })
    expect(results.find((r) => r.id === 'log.fence.superseded')).toMatchObject({ status: 'skipped', reason: 'single-host store' })
    expect(results.find((r) => r.id === 'wakeup.due')).toMatchObject({ status: 'skipped', reason: 'no scheduler' })
    expect(failedIds(results)).toEqual([])
    const passed = results.filter((r) => r.status === 'passed').map((r) => r.id)
    expect(passed.filter((id) => idsRequiring('leases', 'wakeups').includes(id))).toEqual([])
    expect(passed).toContain('durable.cut-batch.rules')
  })

  it('a store without session listings fails exactly the sessions cases, unless it declares skip.sessions; then they are skipped', async () => {
    const without = (store: HarnessStore) => ({ ...store, sessions: undefined })
    const undeclared = await runConformanceCases(optionsFor('no listings', without), { only: idsRequiring('sessions') })
    expect(failedIds(undeclared)).toEqual(idsRequiring('sessions'))
    expect(messageOf(undeclared[0])).toContain("declare skip: { sessions: 'the reason' }")
    const declared = await runConformanceCases(optionsFor('no listings', without, { skip: { sessions: 'no index of sessions' } }), {
      only: [...idsRequiring('sessions'), 'wait.ask.answer-resumes'],
    })
    expect(declared.filter((r) => r.status === 'skipped').map((r) => r.id)).toEqual(idsRequiring('sessions'))
    expect(declared.find((r) => r.status === 'skipped')?.reason).toBe('no index of sessions')
    expect(declared.find((r) => r.id === 'wait.ask.answer-resumes')?.status).toBe('passed')
  })

  it('a store that does not fence fails the fence cases, unless it declares skip.fencing; then they are skipped', async () => {
    const ignoresFence = brokenStores['ignores the fence']!
    const undeclared = await runConformanceCases(optionsFor('no fencing', ignoresFence.make), { only: idsRequiring('fencing') })
    expect(failedIds(undeclared)).toEqual(ignoresFence.fails)
    const declared = await runConformanceCases(optionsFor('no fencing', ignoresFence.make, { skip: { fencing: 'appends are not fenced' } }))
    expect(failedIds(declared)).toEqual([])
    expect(declared.filter((r) => r.status === 'skipped').map((r) => r.id)).toEqual(idsRequiring('fencing'))
    expect(declared.find((r) => r.status === 'skipped')?.reason).toBe('appends are not fenced')
  })

  it('fails a run with an unknown skip key', async () => {
    const results = await runConformanceCases({ ...optionsFor('typo', correct), skip: { lease: 'typo' } as never })
    expect(results).toHaveLength(1)
    expect(results[0]).toMatchObject({ id: 'options', status: 'failed' })
    expect(messageOf(results[0])).toContain('Unknown skip key "lease"')
  })

  it('fails a skip declared without a reason', async () => {
    const results = await runConformanceCases({ ...optionsFor('no reason', correct), skip: { fencing: ' ' } })
    expect(results[0]).toMatchObject({ id: 'options', status: 'failed' })
  })

  it('reports a case whose cleanup fails as failed, and a failed case with its own error, not the cleanup’s', async () => {
    const cleanup = async () => {
      throw new Error('ENOTEMPTY: a racer still writes')
    }
    const [passed] = await runConformanceCases({ ...optionsFor('cleanup fails', correct), cleanup }, { only: ['log.append.first-batch'] })
    expect(passed).toMatchObject({ id: 'log.append.first-batch', status: 'failed' })
    expect(messageOf(passed)).toContain('its cleanup failed: ENOTEMPTY')
    const lost = (store: HarnessStore): HarnessStore => ({ ...store, append: async () => ({ nextSeq: 1 }) })
    const [failed] = await runConformanceCases({ ...optionsFor('loses appends', lost), cleanup }, { only: ['log.append.first-batch'] })
    expect(failed).toMatchObject({ id: 'log.append.first-batch', status: 'failed' })
    expect(messageOf(failed)).not.toContain('ENOTEMPTY')
  })

  it('fails the dump cases when a store gives no dump and does not declare it', async () => {
    const results = await runConformanceCases({ ...optionsFor('no dump', correct), dump: undefined }, { only: idsRequiring('dump') })
    expect(failedIds(results)).toEqual(idsRequiring('dump'))
  })
})

describe('options', () => {
  it('refuses a concurrency below 2 (or not a whole number): the race cases would race nobody', async () => {
    for (const concurrency of [1, 0, -3, 2.5, Number.NaN]) {
      const results = await runConformanceCases({ ...optionsFor('lonely', correct), concurrency })
      expect(results).toHaveLength(1)
      expect(results[0]).toMatchObject({ id: 'options', status: 'failed' })
      expect(messageOf(results[0])).toContain('concurrency must be a whole number of at least 2')
    }
    const two = await runConformanceCases({ ...optionsFor('pair', correct), concurrency: 2 }, { only: idsRequiring('races') })
    expect(failures(two)).toEqual([])
  })

  it('refuses a processes module that does not exist, and processes with skip.races', async () => {
    const missing = await runConformanceCases({
      ...optionsFor('x', correct),
      processes: { module: new URL('./no-such-factory.js', import.meta.url) },
    })
    expect(messageOf(missing[0])).toContain('no-such-factory.js does not exist')
    const both = await runConformanceCases({
      ...optionsFor('x', correct),
      processes: { module: new URL('./custom-store/file-store-factory.ts', import.meta.url) },
      skip: { races: 'one connection' },
    })
    expect(messageOf(both[0])).toContain('choose one')
  })

  it('fails every case, naming the declaration, when a store declares limits below what the harness needs', async () => {
    const tiny = optionsFor('tiny limits', (store) => ({ ...store, limits: { ...store.limits, maxRecordBytes: 1000 } }))
    const results = await runConformanceCases(tiny, { only: ['log.append.first-batch', 'durable.step.json-only'] })
    expect(failedIds(results)).toEqual(['log.append.first-batch', 'durable.step.json-only'])
    for (const result of results) {
      expect(messageOf(result)).toContain(`limits.maxRecordBytes = 1000, below the ${MIN_STORE_LIMITS.maxRecordBytes}`)
      expect(messageOf(result)).toContain("store's limits declaration")
    }
  })

  it('fails every case when the store declares other limits than options.limits', async () => {
    const results = await runConformanceCases(
      { ...optionsFor('other limits', correct), limits: { maxRecordBytes: 128 * 1024, maxBatchBytes: 1024 * 1024 } },
      { only: ['log.append.first-batch'] },
    )
    expect(messageOf(results[0])).toContain('but options.limits says')
  })
})

describe('races in other processes', () => {
  const raceCases = idsRequiring('races')

  for (const kind of ['thread', 'process'] as const) {
    it(`a memory store cannot race from another ${kind}: each racer has data of its own, so every race case fails`, async () => {
      const results = await runConformanceCases(
        {
          ...optionsFor('memory', correct),
          processes: { module: new URL('./custom-store/memory-store-factory.mjs', import.meta.url), kind, count: 2 },
        },
        { only: raceCases },
      )
      expect(failedIds(results)).toEqual(raceCases)
      expect(messageOf(results.find((r) => r.id === 'log.race.same-seq'))).toContain('writers won')
    }, 120_000)
  }

  it('refuses a TypeScript module for worker threads, and a count below 2', async () => {
    const ts = await runConformanceCases({
      ...optionsFor('x', correct),
      processes: { module: new URL('./custom-store/file-store-factory.ts', import.meta.url), kind: 'thread' },
    })
    expect(messageOf(ts[0])).toContain('worker threads run no --import loader')
    const one = await runConformanceCases({
      ...optionsFor('x', correct),
      processes: { module: new URL('./custom-store/memory-store-factory.mjs', import.meta.url), count: 1 },
    })
    expect(messageOf(one[0])).toContain('processes.count must be a whole number of at least 2')
  })

  it('a file store without a lock passes every case when its writers share one process', async () => {
    const options = fileStoreOptions('file store, no lock', new URL('./custom-store/unlocked-file-store-factory.ts', import.meta.url), {
      lock: false,
    })
    const results = await runConformanceCases({ ...options, processes: undefined })
    expect(failures(results)).toEqual([])
  }, 300_000)

  it('and fails exactly the race cases when they race from other processes: no transaction across processes', async () => {
    const options = fileStoreOptions('file store, no lock', new URL('./custom-store/unlocked-file-store-factory.ts', import.meta.url), {
      lock: false,
    })
    // The cases whose writers or readers run in the racer processes; every other case runs in this process, as above.
    const results = await runConformanceCases(options, { only: [...raceCases, 'log.append.big-batch'] })
    // Either way, by timing: a takeover's writers conflict on the seq, so a store with no lock across
    // processes fails race.fenced-append-takeover only when two of its writes interleave inside one
    // append; and an append that raced the delete survives in the log only when it lands after the
    // delete's removal; its raw-file sibling (log.delete.racing-writers-no-trace) sees it only when
    // an append's write overlapped the delete at all, which a loaded machine can keep from happening.
    const eitherWay = ['race.fenced-append-takeover', 'log.delete.racing-writers', 'log.delete.racing-writers-no-trace']
    expect(
      failedIds(results).filter((id) => !eitherWay.includes(id)),
      failures(results).join('\n'),
    ).toEqual(raceCases.filter((id) => !eitherWay.includes(id)))
  }, 300_000)
})
