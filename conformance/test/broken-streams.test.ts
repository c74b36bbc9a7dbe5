import { type CaseResult, type ConformanceOptions, runConformanceCases, streamSectionCases } from '@tanstack/ai-harness-conformance'
import { createMemoryData, dumpMemoryData, type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { brokenStreams } from './broken-streams.js'

const order = streamSectionCases.map((c) => c.id)
const failed = (results: readonly CaseResult[]) => results.filter((r) => r.status === 'failed').map((r) => r.id)
const why = (results: readonly CaseResult[]) =>
  results.filter((r) => r.status === 'failed').map((r) => `${r.id}: ${String((r.error as Error)?.message ?? r.error).split('\n')[0]}`)

/** The memory store, with the streams and locks of `hook`. */
function optionsWith(name: string, streams: ConformanceOptions['streams']): ConformanceOptions {
  const databases = new Map<string, MemoryData>()
  const database = (namespace: string) => databases.get(namespace) ?? databases.set(namespace, createMemoryData()).get(namespace)!
  return {
    name,
    streams,
    createStore: ({ namespace, clock }) => memoryStore({ data: database(namespace), clock }),
    dump: async ({ namespace }) => dumpMemoryData(database(namespace)),
    cleanup: async ({ namespace }) => void databases.delete(namespace),
  }
}

describe('the stream and lock cases catch each broken implementation', () => {
  it('the correct implementation passes them all', async () => {
    const results = await runConformanceCases(optionsWith('harnessStreams', undefined), { only: order })
    expect(failed(results), why(results).join('\n')).toEqual([])
    expect(results.map((r) => r.id)).toEqual(order)
  })
  for (const [name, broken] of Object.entries(brokenStreams)) {
    it(`"${name}" fails exactly ${broken.fails.join(', ')}`, async () => {
      for (const id of broken.fails) expect(order, `${name} lists a case the section does not have`).toContain(id)
      const results = await runConformanceCases(optionsWith(name, broken.hook), { only: order })
      expect(failed(results), why(results).join('\n')).toEqual(order.filter((id) => broken.fails.includes(id)))
    }, 180_000)
  }
})
