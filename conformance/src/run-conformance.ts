import { afterAll, describe, it } from 'vitest'
import type { ConformanceOptions } from './options.js'
import { casesFor, optionProblems, runCase, runResources } from './run-cases.js'

/**
 * Registers the whole conformance suite in the calling vitest file:
 *
 * ```ts
 * runConformance({ name: 'my store', createStore: ({ namespace, clock }) => myStore({ namespace, clock }) })
 * ```
 *
 * Each case is one test named by its id. A capability the store leaves out is a
 * skipped test only when `skip` declares it with a reason; otherwise the case fails.
 */
export function runConformance(options: ConformanceOptions): void {
  describe(`conformance: ${options.name}`, () => {
    const problems = optionProblems(options)
    if (problems.length > 0) {
      it('options', () => {
        throw new Error(problems.join(' '))
      })
      return
    }
    const resources = runResources(options)
    afterAll(() => resources.close())
    for (const c of casesFor(options)) {
      if (options.cases && !options.cases.includes(c.id)) continue
      const declared = (c.requires ?? []).map((need) => options.skip?.[need]).find((reason) => reason)
      if (declared) {
        it.skip(`${c.id} (skipped: ${declared})`, () => {})
        continue
      }
      it(
        `${c.id}: ${c.title}`,
        async () => {
          const result = await runCase(options, c, resources)
          if (result.status === 'failed') throw result.error
          if (result.status === 'skipped') throw new Error(`case ${c.id} was skipped without a declaration`)
        },
        options.timeoutMs ?? 60_000,
      )
    }
  })
}
