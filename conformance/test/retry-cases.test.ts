import {
  appendWriteFault,
  type CaseResult,
  type ConformanceOptions,
  type FaultyStoreContext,
  runConformanceCases,
  sendWithFault,
  storeRetryCases,
} from '@tanstack/ai-harness-conformance'
import { HarnessError, type HarnessStore, isHarnessError, isNetworkError, withRetry } from '@tanstack/ai-harness/store'
import { createMemoryData, type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'

// The store.retry.* cases against a store with a client of its own: a memory store behind a
// retrying "network" layer, right and broken in the ways the cases are meant to catch.

type Flaw = 'none' | 'no retries' | 'raw error after retries' | 'blind rewrite after a lost reply' | 'undo after spent retries'

/** The memory store behind a client that fails on cue, retried with the core's withRetry unless `flaw` says otherwise. */
function clientStore(data: MemoryData, context: FaultyStoreContext, flaw: Flaw): HarnessStore {
  const inner = memoryStore({ data, clock: context.clock })
  const throttled = () => Object.assign(new Error('throttled (injected)'), { code: 'ECONNRESET' })
  const write = (logId: string, expectedSeq: number, records: Parameters<HarnessStore['append']>[2]) =>
    sendWithFault(appendWriteFault(context, throttled), () => inner.append(logId, expectedSeq, records))
  return {
    ...inner,
    async append(logId, expectedSeq, records) {
      const isTransient = flaw === 'no retries' ? () => false : isNetworkError
      try {
        return await withRetry(() => write(logId, expectedSeq, records), { ...context.retry, isTransient })
      } catch (error) {
        if (flaw === 'blind rewrite after a lost reply' && isHarnessError(error, 'LOG_CONFLICT')) {
          const next = (error as unknown as { actualNextSeq: number }).actualNextSeq
          return inner.append(logId, next, records)
        }
        if (isHarnessError(error) || flaw === 'raw error after retries') throw error
        // Takes back what the failed append may have written: a batch that did land is lost.
        if (flaw === 'undo after spent retries') {
          const log = data.logs.get(logId)
          if (log) log.length = Math.min(log.length, expectedSeq - 1)
        }
        throw new HarnessError('STORE_UNAVAILABLE', 'the store kept failing', { cause: error })
      }
    },
  }
}

function optionsWith(flaw: Flaw): ConformanceOptions {
  const databases = new Map<string, MemoryData>()
  const data = (namespace: string) => databases.get(namespace) ?? databases.set(namespace, createMemoryData()).get(namespace)!
  return {
    name: `client store (${flaw})`,
    // One factory: with faults in its context, the same store behind a client that fails on cue.
    createStore: ({ namespace, clock, retry, faults }) =>
      faults
        ? clientStore(data(namespace), { namespace, clock, retry: retry ?? {}, ...faults }, flaw)
        : memoryStore({ data: data(namespace), clock }),
    cleanup: async ({ namespace }) => void databases.delete(namespace),
    faults: true,
  }
}

const ids = storeRetryCases.map((c) => c.id)
const failed = (results: readonly CaseResult[]) => results.filter((r) => r.status !== 'passed').map((r) => r.id)

describe('the store retry cases', () => {
  it('run only with a faulty store, and a store that retries right passes them', async () => {
    const without = await runConformanceCases({ ...optionsWith('none'), faults: undefined }, { only: ids })
    expect(without).toEqual([])
    const results = await runConformanceCases(optionsWith('none'), { only: ids })
    expect(results.map((r) => [r.id, r.status, String((r.error as Error)?.message ?? '')])).toEqual(ids.map((id) => [id, 'passed', '']))
  })

  it('run on the store createStore builds, and fail with that said when createStore ignores context.faults', async () => {
    const options = optionsWith('none')
    const deaf: ConformanceOptions = { ...options, createStore: ({ namespace, clock }) => options.createStore({ namespace, clock }) }
    const results = await runConformanceCases(deaf, { only: ids })
    expect(results.map((r) => r.status)).toEqual(ids.map(() => 'failed'))
    expect(String((results[0]!.error as Error).message)).toContain('never asked faults.onAppendWrite()')
  })

  it.each([
    ['no retries', ['store.retry.transient', 'store.retry.exhausted', 'store.retry.lost-reply', 'store.retry.unanswered']],
    ['raw error after retries', ['store.retry.exhausted', 'store.retry.unanswered']],
    ['blind rewrite after a lost reply', ['store.retry.lost-reply', 'store.retry.unanswered']],
    ['undo after spent retries', ['store.retry.unanswered']],
  ] as const)('catch a store with %s', async (flaw, fails) => {
    expect(failed(await runConformanceCases(optionsWith(flaw), { only: ids }))).toEqual(fails)
  })
})
