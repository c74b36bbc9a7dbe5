import { randomUUID } from 'node:crypto'
import { type Clock, type HarnessStore, maxLogIdBytesOf, type StoreLimits, storeLimitsProblems } from '@tanstack/ai-harness/store'
import { type CaseContext, type ConformanceCase, guardStore, type NamespaceContext, newClock } from './case.js'
import { fenceCases } from './cases/fence-cases.js'
import { leaseCases } from './cases/lease-cases.js'
import { leaseSkewCases } from './cases/lease-skew-cases.js'
import { livenessCases } from './cases/liveness-cases.js'
import { logBatchCases } from './cases/log-batch-cases.js'
import { logCases } from './cases/log-cases.js'
import { logDeleteCases } from './cases/log-delete-cases.js'
import { logDeleteLiveCases } from './cases/log-delete-live-cases.js'
import { logFidelityCases } from './cases/log-fidelity-cases.js'
import { logIdCases } from './cases/log-id-cases.js'
import { logPagingCases } from './cases/log-paging-cases.js'
import { namespaceCases } from './cases/namespace-cases.js'
import { sessionCases } from './cases/session-cases.js'
import { storeRetryCases } from './cases/store-retry-cases.js'
import { wakeupCases } from './cases/wakeup-cases.js'
import { contentCases } from './cases/content-cases.js'
import { crossRaceCases } from './cases/cross-race-cases.js'
import { isolationCases } from './cases/isolation-cases.js'
import { listingScaleCases } from './cases/listing-scale-cases.js'
import { runtimeParameterCases } from './cases/runtime-parameter-cases.js'
import { storeClockCases } from './cases/store-clock-cases.js'
import { hostStoreCases } from './durable/host-store-cases.js'
import { agentCases } from './durable/agent-cases.js'
import { approvalCases } from './durable/approval-cases.js'
import { durableCases } from './durable/durable-cases.js'
import { waitCases } from './durable/wait-cases.js'
import { runtimeCases } from './durable/runtime-cases.js'
import { secretCases } from './durable/secret-cases.js'
import { faultCases } from './durable/fault-cases.js'
import { retryCases } from './durable/retry-cases.js'
import { outcomeCases } from './durable/outcome-cases.js'
import { type ConformanceOptions, SKIP_KEYS, type SkipKey } from './options.js'
import { RacerPool, resolveProcesses } from './processes/racer-pool.js'
import { streamSectionCases } from './streams/index.js'

/** The cases of the store contract itself: log, leases, wakeups, session listings, fenced appends, namespaces. */
export const storeCases: readonly ConformanceCase[] = [
  ...logCases,
  ...logPagingCases,
  ...logIdCases,
  ...logBatchCases,
  ...logDeleteCases,
  ...logDeleteLiveCases,
  ...logFidelityCases,
  ...fenceCases,
  ...leaseCases,
  ...leaseSkewCases,
  ...livenessCases,
  ...wakeupCases,
  ...namespaceCases,
  ...sessionCases,
  ...isolationCases,
  ...contentCases,
  ...listingScaleCases,
  ...crossRaceCases,
  ...storeClockCases,
  ...runtimeParameterCases,
]

/** The durable semantics of the seed page, proved on top of the store. */
export const durableSemanticsCases: readonly ConformanceCase[] = [
  ...durableCases,
  ...waitCases,
  ...approvalCases,
  ...agentCases,
  ...runtimeCases,
  ...secretCases,
  ...faultCases,
  ...retryCases,
  ...outcomeCases,
  ...hostStoreCases,
]

/** Every case of the suite: the store cases, TanStack AI's streams and locks, then the durable semantics on top of the store. */
export function allCases(): readonly ConformanceCase[] {
  return [...storeCases, ...streamSectionCases, ...durableSemanticsCases]
}

/**
 * The cases a run with these options has: every case, and the cases of the store's own
 * retries when the options give a store that fails on cue (`faults`).
 */
export function casesFor(options: Pick<ConformanceOptions, 'faults'>): readonly ConformanceCase[] {
  return options.faults ? [...allCases(), ...storeRetryCases] : allCases()
}

export type CaseStatus = 'passed' | 'failed' | 'skipped'
export interface CaseResult {
  readonly id: string
  readonly status: CaseStatus
  readonly error?: unknown
  /** For a skipped case: the store's stated reason. */
  readonly reason?: string
  /** Wall time of the case, setup and cleanup included. */
  readonly ms?: number
}

/** Problems with the options themselves; each one fails the run. */
export function optionProblems(options: ConformanceOptions): string[] {
  const problems: string[] = []
  if (typeof options.createStore !== 'function') problems.push('createStore must be a function ({ namespace, clock }) => store.')
  for (const [key, reason] of Object.entries(options.skip ?? {})) {
    if (!(SKIP_KEYS as readonly string[]).includes(key)) {
      problems.push(`Unknown skip key ${JSON.stringify(key)}; the keys are ${SKIP_KEYS.join(', ')}.`)
    } else if (typeof reason !== 'string' || reason.trim() === '') {
      problems.push(`skip.${key} needs a reason, e.g. { ${key}: 'why this store leaves it out' }.`)
    }
  }
  const { concurrency } = options
  if (concurrency !== undefined && !(Number.isSafeInteger(concurrency) && concurrency >= 2)) {
    problems.push(
      `concurrency must be a whole number of at least 2, not ${String(concurrency)}: with fewer writers the race cases race nobody. A store whose instances cannot run at once declares skip: { races: 'why' } instead.`,
    )
  }
  if (options.faults !== undefined && typeof options.faults !== 'boolean') {
    problems.push(
      'faults is true when createStore({ namespace, clock, retry, faults }) wraps its client with faults (onAppendWrite, injected) and passes retry on; the retry cases then run on the store createStore builds.',
    )
  }
  if (options.limits !== undefined) problems.push(...storeLimitsProblems(options.limits).map((p) => `options.limits: ${p}`))
  if (options.cases !== undefined) {
    const known = new Set(casesFor(options).map((c) => c.id))
    const unknown = options.cases.filter((id) => !known.has(id))
    if (unknown.length > 0)
      problems.push(`cases names no case of the suite: ${unknown.join(', ')}. Give case ids as the test names show them.`)
  }
  if (options.processes !== undefined) {
    if (options.skip?.races) problems.push('processes runs the race cases in other processes, but skip.races skips them: choose one.')
    const { count } = options.processes
    if (count !== undefined && !(Number.isSafeInteger(count) && count >= 2)) {
      problems.push(`processes.count must be a whole number of at least 2, not ${String(count)}: one racer races nobody.`)
    }
    if (options.processes.kind !== undefined && options.processes.kind !== 'process' && options.processes.kind !== 'thread') {
      problems.push(`processes.kind is 'process' or 'thread', not ${JSON.stringify(options.processes.kind)}.`)
    }
    try {
      resolveProcesses(options.processes)
    } catch (error) {
      problems.push((error as Error).message)
    }
  }
  return problems
}

/** Why a case cannot run on this store, or null. Declared gaps skip; undeclared gaps fail. */
export function gapOf(c: ConformanceCase, options: ConformanceOptions, probe: HarnessStore): { skip: string } | { fail: string } | null {
  for (const need of c.requires ?? []) {
    const declared = options.skip?.[need]
    if (declared) return { skip: declared }
    const has =
      need === 'dump'
        ? options.dump !== undefined
        : need === 'races' || need === 'fencing'
          ? true
          : need === 'orphans'
            ? typeof probe.leases?.orphans === 'function'
            : need === 'watch'
              ? typeof probe.wakeups?.watch === 'function'
              : probe[need as 'leases' | 'wakeups' | 'sessions'] !== undefined
    if (!has) {
      return {
        fail: `The store has no ${need}. Implement it, or declare skip: { ${need}: 'the reason' } so the gap is reported as skipped.`,
      }
    }
  }
  return null
}

/** What a run shares between its cases: the racers of `processes`, started on first use. */
export interface RunResources {
  racers(): RacerPool
  close(): Promise<void>
}

export function runResources(options: ConformanceOptions): RunResources {
  let pool: RacerPool | undefined
  return {
    racers() {
      if (!options.processes) throw new Error('no processes option')
      pool ??= new RacerPool(options.processes, options.processes.count ?? Math.min(options.concurrency ?? 8, 4))
      return pool
    },
    async close() {
      await pool?.close()
      pool = undefined
    },
  }
}

/** Short and plain (letters, digits, _): stores use it in table, schema and key names. */
function newNamespace(c: ConformanceCase): string {
  return `c${randomUUID().replace(/-/g, '').slice(0, 12)}_${c.id.replace(/[^a-z0-9]/gi, '_').slice(0, 30)}`
}

/** Builds the context of one case: a fresh namespace, a manual clock, store instances. */
export async function createCaseContext(options: ConformanceOptions, c: ConformanceCase, resources?: RunResources) {
  const clock = newClock()
  const opened: HarnessStore[] = []
  const namespaces: string[] = []
  /** Store methods that threw synchronously: the case fails with that, whatever else happened. */
  const broken: Error[] = []
  const dispose = async () => {
    // Every instance is closed before cleanup, so cleanup may drop what they used.
    await Promise.allSettled(opened.map((s) => s.close?.()))
    for (const namespace of namespaces) await options.cleanup?.({ namespace })
  }
  const openOn =
    (namespace: string, storeClock: Clock = clock) =>
    async () => {
      const store = guardStore(await options.createStore({ namespace, clock: storeClock }), broken)
      opened.push(store)
      return store
    }
  const dumpOf = (namespace: string) => async () => {
    if (!options.dump) throw new Error('dump() is not available for this store')
    const raw = await options.dump({ namespace })
    return typeof raw === 'string' ? raw : Buffer.from(raw).toString('latin1') + Buffer.from(raw).toString('utf8')
  }
  const namespaceContext = async (name?: string): Promise<NamespaceContext> => {
    if (name !== undefined && !/^[A-Za-z0-9_]{1,44}$/.test(name))
      throw new Error(`a case opened the namespace ${name}: not letters, digits and _`)
    const namespace = name ?? newNamespace(c)
    namespaces.push(namespace)
    const openStore = openOn(namespace)
    return { namespace, store: await openStore(), openStore, dump: dumpOf(namespace) }
  }
  try {
    const main = await namespaceContext(undefined)
    const limits = checkedLimits(options, main.store)
    const context: CaseContext = {
      ...main,
      clock,
      options,
      limits,
      maxLogIdBytes: maxLogIdBytesOf(limits),
      concurrency: options.concurrency ?? 8,
      openNamespace: namespaceContext,
      freshRoot: () => `c${randomUUID().replace(/-/g, '').slice(0, 16)}_iso`,
      openSkewedStore: (offsetMs) => openOn(main.namespace, { now: () => clock.now() + offsetMs })(),
      async openFaultyStore(faults) {
        if (!options.faults) throw new Error('openFaultyStore needs the faults option')
        // The shipped factory itself, told to wrap its client: the cases prove the store you ship.
        const { retry, ...client } = faults
        const store = guardStore(await options.createStore({ namespace: main.namespace, clock, retry, faults: client }), broken)
        opened.push(store)
        return store
      },
      async openRacer() {
        if (!options.processes || !resources) return main.openStore()
        const store = guardStore(await resources.racers().open(main.namespace, clock), broken)
        opened.push(store)
        return store
      },
      async openRacerProcess() {
        if (!options.processes || !resources) return undefined
        const racer = await resources.racers().openProcess(main.namespace, clock)
        opened.push(racer.store)
        return racer
      },
    }
    return { context, dispose, broken }
  } catch (error) {
    await dispose()
    throw error
  }
}

/** The store's declared limits, after checking them against the options and the minimum the harness needs. */
function checkedLimits(options: ConformanceOptions, store: HarnessStore): StoreLimits {
  const problems = storeLimitsProblems(store.limits)
  if (problems.length > 0) throw new Error(`createStore returned a store with unusable limits. ${problems.join(' ')}`)
  if (options.limits && JSON.stringify(sorted(options.limits)) !== JSON.stringify(sorted(store.limits))) {
    throw new Error(
      `The store declares limits ${JSON.stringify(sorted(store.limits))}, but options.limits says ${JSON.stringify(sorted(options.limits))}. Make them equal, or leave options.limits out.`,
    )
  }
  return store.limits
}

const sorted = (limits: StoreLimits) => Object.fromEntries(Object.entries(limits).sort(([a], [b]) => (a < b ? -1 : 1)))

/** Runs one case to completion: passed, failed (with the error) or skipped (with the reason). */
export async function runCase(options: ConformanceOptions, c: ConformanceCase, resources?: RunResources): Promise<CaseResult> {
  const started = performance.now()
  const result = await runCaseOnce(options, c, resources)
  return { ...result, ms: Math.round(performance.now() - started) }
}

async function runCaseOnce(options: ConformanceOptions, c: ConformanceCase, resources?: RunResources): Promise<CaseResult> {
  let built: Awaited<ReturnType<typeof createCaseContext>>
  try {
    built = await createCaseContext(options, c, resources)
  } catch (error) {
    return { id: c.id, status: 'failed', error }
  }
  const { context, dispose, broken } = built
  const result = await runBuilt(c, options, context, broken)
  try {
    await dispose()
  } catch (error) {
    // A failed case's own error says what went wrong; its cleanup failing after it (work of the case still going) must not hide it.
    if (result.status === 'failed') return result
    return {
      id: c.id,
      status: 'failed',
      error: new Error(`The case ended, but its cleanup failed: ${String((error as Error)?.message ?? error)}`, { cause: error }),
    }
  }
  return result
}

async function runBuilt(c: ConformanceCase, options: ConformanceOptions, context: CaseContext, broken: Error[]): Promise<CaseResult> {
  try {
    const gap = gapOf(c, options, context.store)
    if (gap && 'skip' in gap) return { id: c.id, status: 'skipped', reason: gap.skip }
    if (gap) return { id: c.id, status: 'failed', error: new Error(gap.fail) }
    await c.run(context)
    if (broken.length > 0) return { id: c.id, status: 'failed', error: broken[0] }
    return { id: c.id, status: 'passed' }
  } catch (error) {
    return { id: c.id, status: 'failed', error: broken[0] ?? error }
  }
}

/**
 * Runs the suite without a test runner and returns each case's result. The suite's
 * own tests use it to prove that broken stores fail the cases meant for them.
 */
export async function runConformanceCases(options: ConformanceOptions, filter: { only?: readonly string[] } = {}): Promise<CaseResult[]> {
  const problems = optionProblems(options)
  if (problems.length > 0) return [{ id: 'options', status: 'failed', error: new Error(problems.join(' ')) }]
  const resources = runResources(options)
  const results: CaseResult[] = []
  try {
    for (const c of casesFor(options)) {
      if (filter.only && !filter.only.includes(c.id)) continue
      results.push(await runCase(options, c, resources))
    }
  } finally {
    await resources.close()
  }
  return results
}

export type { SkipKey }
