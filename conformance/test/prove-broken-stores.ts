import { allCases, type CaseResult, runConformanceCases } from '@tanstack/ai-harness-conformance'
import { describe, expect, it } from 'vitest'
import { brokenStores, optionsFor } from './broken-stores.js'

const order = allCases().map((c) => c.id)
const failedIds = (results: readonly CaseResult[]) => results.filter((r) => r.status === 'failed').map((r) => r.id)
export const failures = (results: readonly CaseResult[]) =>
  results.filter((r) => r.status === 'failed').map((r) => `${r.id}: ${String((r.error as Error)?.message ?? r.error).split('\n')[0]}`)

/** Which file runs which broken stores: split so vitest can run them side by side. */
export function brokenStoresOfPart(part: number, parts: number) {
  return Object.entries(brokenStores).filter((_, i) => i % parts === part)
}

/** One `it` per broken store: it fails exactly its listed cases, and passes every other. */
export function proveBrokenStores(part: number, parts: number): void {
  describe(`the suite catches each broken store (part ${part + 1} of ${parts})`, () => {
    for (const [name, broken] of brokenStoresOfPart(part, parts)) {
      // Generous: a store whose locks never free makes lock.exclusive's waiters give up after 40 s, near 60 s in all under load.
      it(`"${name}" fails exactly ${broken.fails.join(', ')}`, async () => {
        expect(broken.fails.length, 'a broken store must fail some case').toBeGreaterThan(0)
        for (const id of broken.fails) expect(order, `${name} lists a case the suite does not have`).toContain(id)
        const results = await runConformanceCases(optionsFor(name, broken.make, {}, broken.shared))
        const counted = (id: string) => !broken.mayFail?.includes(id)
        expect(failedIds(results).filter(counted), failures(results).join('\n')).toEqual(
          order.filter((id) => broken.fails.includes(id) && counted(id)),
        )
        expect(results.filter((r) => r.status === 'skipped')).toEqual([])
        // The failure says what is wrong, in the words of the contract.
        const first = results.find((r) => r.status === 'failed')!
        expect(String((first.error as Error).message)).toMatch(broken.says)
      }, 180_000)
    }
  })
}
