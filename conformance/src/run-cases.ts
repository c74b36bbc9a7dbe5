import { randomUUID } from 'node:crypto'
import type { HarnessStore } from '@tanstack/ai-harness'
import { type CaseContext, type ConformanceCase, newClock } from './case.js'
import { leaseCases } from './cases/lease-cases.js'
import { logCases } from './cases/log-cases.js'
import { wakeupCases } from './cases/wakeup-cases.js'
import { durableCases } from './durable/durable-cases.js'
import { waitCases } from './durable/wait-cases.js'
import { agentCases } from './durable/agent-cases.js'
import { runtimeCases } from './durable/runtime-cases.js'
import { secretCases } from './durable/secret-cases.js'
import { faultCases } from './durable/fault-cases.js'
import { type ConformanceOptions, SKIP_KEYS, type SkipKey } from './options.js'

/** The cases of the store contract itself: log, leases, wakeups. */
export const storeCases: readonly ConformanceCase[] = [...logCases, ...leaseCases, ...wakeupCases]

/** The durable semantics of the seed page, proved on top of the store. */
export const durableSemanticsCases: readonly ConformanceCase[] = [
  ...durableCases,
  ...waitCases,
  ...agentCases,
  ...runtimeCases,
  ...secretCases,
  ...faultCases,
]

/** Every case of the suite: the store cases, then the durable semantics on top of the store. */
export function allCases(): readonly ConformanceCase[] {
  return [...storeCases, ...durableSemanticsCases]
}

export type CaseStatus = 'passed' | 'failed' | 'skipped'
export interface CaseResult {
  readonly id: string
  readonly status: CaseStatus
  readonly error?: unknown
  /** For a skipped case: the store's stated reason. */
  readonly reason?: string
}

/** Problems with the options themselves; each one fails the run. */
export function optionProblems(options: ConformanceOptions): string[] {
  const problems: string[] = []
  for (const [key, reason] of Object.entries(options.skip ?? {})) {
    if (!(SKIP_KEYS as readonly string[]).includes(key)) {
      problems.push(`Unknown skip key ${JSON.stringify(key)}; the keys are ${SKIP_KEYS.join(', ')}.`)
    } else if (typeof reason !== 'string' || reason.trim() === '') {
      problems.push(`skip.${key} needs a reason, e.g. { ${key}: 'why this store leaves it out' }.`)
    }
  }
  return problems
}

/** Why a case cannot run on this store, or null. Declared gaps skip; undeclared gaps fail. */
export function gapOf(c: ConformanceCase, options: ConformanceOptions, probe: HarnessStore): { skip: string } | { fail: string } | null {
  for (const need of c.requires ?? []) {
    const declared = options.skip?.[need]
    if (declared) return { skip: declared }
    const has = need === 'dump' ? options.dump !== undefined : need === 'races' ? true : probe[need as 'leases' | 'wakeups'] !== undefined
    if (!has) {
      return {
        fail: `The store has no ${need}. Implement it, or declare skip: { ${need}: 'the reason' } so the gap is reported as skipped.`,
      }
    }
  }
  return null
}

/** Builds the context of one case: a fresh namespace, a manual clock, store instances. */
export async function createCaseContext(options: ConformanceOptions, c: ConformanceCase) {
  // Short and plain (letters, digits, _): stores use it in table, schema and key names.
  const namespace = `c${randomUUID().replace(/-/g, '').slice(0, 12)}_${c.id.replace(/[^a-z0-9]/gi, '_').slice(0, 30)}`
  const clock = newClock()
  const opened: HarnessStore[] = []
  const openStore = async () => {
    const store = await options.createStore({ namespace, clock })
    opened.push(store)
    return store
  }
  const store = await openStore()
  const context: CaseContext = {
    namespace,
    clock,
    options,
    store,
    openStore,
    concurrency: options.concurrency ?? 8,
    async dump() {
      if (!options.dump) throw new Error('dump() is not available for this store')
      const raw = await options.dump({ namespace })
      return typeof raw === 'string' ? raw : Buffer.from(raw).toString('latin1') + Buffer.from(raw).toString('utf8')
    },
  }
  const dispose = async () => {
    await Promise.allSettled(opened.map((s) => s.close?.()))
    await options.cleanup?.({ namespace })
  }
  return { context, dispose }
}

/** Runs one case to completion: passed, failed (with the error) or skipped (with the reason). */
export async function runCase(options: ConformanceOptions, c: ConformanceCase): Promise<CaseResult> {
  const { context, dispose } = await createCaseContext(options, c)
  try {
    const gap = gapOf(c, options, context.store)
    if (gap && 'skip' in gap) return { id: c.id, status: 'skipped', reason: gap.skip }
    if (gap) return { id: c.id, status: 'failed', error: new Error(gap.fail) }
    await c.run(context)
    return { id: c.id, status: 'passed' }
  } catch (error) {
    return { id: c.id, status: 'failed', error }
  } finally {
    await dispose()
  }
}

/**
 * Runs the suite without a test runner and returns each case's result. The suite's
 * own tests use it to prove that broken stores fail the cases meant for them.
 */
export async function runConformanceCases(options: ConformanceOptions, filter: { only?: readonly string[] } = {}): Promise<CaseResult[]> {
  const problems = optionProblems(options)
  if (problems.length > 0) return [{ id: 'options', status: 'failed', error: new Error(problems.join(' ')) }]
  const results: CaseResult[] = []
  for (const c of allCases()) {
    if (filter.only && !filter.only.includes(c.id)) continue
    results.push(await runCase(options, c))
  }
  return results
}

export type { SkipKey }
