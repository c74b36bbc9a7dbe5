import { allCases, runConformanceCases } from '@tanstack/ai-harness-conformance'
import { describe, expect, it } from 'vitest'
import { fileStoreOptions } from './custom-store/file-store-options.js'

const failures = (results: Awaited<ReturnType<typeof runConformanceCases>>) =>
  results.filter((r) => r.status !== 'passed').map((r) => `${r.id}: ${r.status} ${String((r.error as Error)?.message ?? r.reason ?? '')}`)

describe('a store written from the READMEs alone', () => {
  it('passes every case, its race writers in other processes', async () => {
    const results = await runConformanceCases(
      fileStoreOptions('file store', new URL('./custom-store/file-store-factory.ts', import.meta.url)),
    )
    expect(
      failures(results.filter((r) => r.status !== 'skipped' || !(r.id.startsWith('lease.orphans.') || r.id === 'wakeup.watch'))),
    ).toEqual([])
    expect(results.map((r) => r.id)).toEqual(allCases().map((c) => c.id))
  }, 300_000)
})
