import { readAll } from '../../contract/read-all.js'
import { otelApi } from '../../runtime/tracing.js'
import { SimRandom } from './random.js'
import { SimClients } from './sim-clients.js'
import { type OpenSimStore, SimMachine, type SimShared } from './sim-hosts.js'
import { harnessStreams } from '../../streams/index.js'
import { checkChildCancels, checkInvocations, checkLog, checkOutcomeSteps, checkStreams, checkWorld, unsettled } from './sim-invariants.js'
import { SimLedger } from './sim-ledger.js'
import { faultFree, planWorld, type SimPlan } from './sim-plan.js'
import { VirtualTime } from './virtual-time.js'

/** The data set of one world: fresh for each world, opened once per process. */
export interface SimBackend {
  /** A store instance over the world's data, as a process opens it, with that process's clock. */
  readonly open: OpenSimStore
  /** Frees the data set after the world. */
  close?(): Promise<void>
}

export interface SimWorldOptions {
  readonly seed: number
  /** Makes the world's data set (memory: `createMemoryData()`; a database: a fresh schema). */
  readonly backend: () => SimBackend | Promise<SimBackend>
  /** The world's shape; default: drawn from the seed. A shrunk world passes a smaller one. */
  readonly plan?: SimPlan
}

/** What one world did, and every invariant it broke. */
export interface SimReport {
  readonly seed: number
  readonly plan: SimPlan
  readonly violations: readonly string[]
  /** Virtual ms the world ran. */
  readonly virtualMs: number
  readonly appends: number
  readonly invocations: number
  readonly crashes: number
  /** Notes that help read the world (failed resumes, refusals), with their virtual times. */
  readonly trace: readonly string[]
}

/** How long after the faults stop every session must have finished, in virtual ms. */
const QUIET_MS = 180_000
const START = Date.UTC(2026, 0, 1)
/** Plans draw from their own source, apart from the schedule. */
const PLAN_SEED_MASK = 0x5bd1e995

/**
 * Runs one simulated world: its machines (a host and a worker each, restarted after a
 * crash), its clients and people, its faults until `plan.faultsForMs`, and then quiet
 * until every session has finished (or the quiet time runs out: someone is stuck).
 * Everything runs on one virtual clock and one scheduler, so a seed (and plan) replays
 * the same world exactly. Then the invariants are checked; see the package README.
 */
export async function runSimWorld(options: SimWorldOptions): Promise<SimReport> {
  // The schedule is the seed's first fork whether the plan is drawn or given, so a drawn plan passed
  // back with --plan (as the shrinker passes smaller ones) replays the very same world.
  const schedule = new SimRandom(options.seed).fork()
  const plan = options.plan ?? planWorld(new SimRandom((options.seed ^ PLAN_SEED_MASK) >>> 0))
  const backend = await options.backend()
  // The one real wait of the runtime (the optional OpenTelemetry import) happens before time is virtual.
  await otelApi()
  const time = new VirtualTime(START)
  const ledger = new SimLedger(() => time.now)
  const uninstall = time.install()
  const rejections: unknown[] = []
  const onRejection = (reason: unknown) => rejections.push(reason)
  process.on('unhandledRejection', onRejection)
  try {
    const shared: SimShared = {
      time,
      random: schedule,
      ledger,
      plan,
      open: backend.open,
      faultsOn: () => time.now < START + plan.faultsForMs,
      elapsed: () => time.now - START,
    }
    const machines = Array.from({ length: plan.hosts }, (_, i) => new SimMachine(i, shared))
    const clients = new SimClients(shared, machines)
    clients.start()
    await time.run(
      START + plan.faultsForMs + QUIET_MS,
      () => time.now >= START + plan.faultsForMs && unsettled(ledger, clients).length === 0,
    )
    const stuck = unsettled(ledger, clients)
    const violations = [
      ...(stuck.length > 0 ? [`stuck: ${stuck.join(', ')} did not finish ${QUIET_MS} ms after the faults stopped`] : []),
      ...checkInvocations(ledger, faultFree(plan)),
      ...checkOutcomeSteps(ledger),
      ...checkChildCancels(ledger),
      ...checkWorld(ledger, clients),
      ...(await readLogs(backend.open({ now: () => time.now }), ledger, time)),
      ...(await readStreams(backend.open({ now: () => time.now }), ledger, clients, time)),
      ...time.uncaught.map((e) => `a timer threw: ${String(e)}`),
      ...rejections.map((e) => `an unhandled rejection: ${String(e)}`),
    ]
    return {
      seed: options.seed,
      plan,
      violations,
      virtualMs: time.now - START,
      appends: ledger.appends.length,
      invocations: ledger.invocations.length,
      crashes: machines.reduce((n, m) => n + m.crashes, 0),
      trace: ledger.trace,
    }
  } finally {
    process.off('unhandledRejection', onRejection)
    await uninstall()
    dropDevtoolsQueue()
    await backend.close?.()
  }
}

/**
 * TanStack AI's devtools client (one per process, under a global symbol) queues every
 * chat event until a devtools bus answers, and gives up on a connect loop of the
 * process's timers. A world's virtual timers end with the world, and the loop with them:
 * its queue then kept every world's sessions alive (about 0.5 MB a world, out of memory
 * after some 9,000 worlds in one soak). Stopping the loop after each world drops it.
 */
function dropDevtoolsQueue(): void {
  const client = (globalThis as Record<symbol, { stopConnectLoop?: () => void } | undefined>)[
    Symbol.for('tanstack.ai.devtools.eventClient')
  ]
  client?.stopConnectLoop?.()
}

/** Reads each submitted prompt's durable stream straight from the store, and checks what its client saw against it. */
async function readStreams(store: ReturnType<OpenSimStore>, ledger: SimLedger, clients: SimClients, time: VirtualTime): Promise<string[]> {
  const streams = harnessStreams({ store, clock: { now: () => time.now }, retainMs: 3_600_000 })
  const found: string[] = []
  for (const s of clients.sessions) {
    const stored = s.runId === undefined ? undefined : await time.real(() => streams.durability({ runId: s.runId! }).snapshot())
    found.push(...checkStreams(ledger, s, stored))
  }
  return found
}

/** Reads every log the world wrote, straight from the store, and checks it. */
async function readLogs(store: ReturnType<OpenSimStore>, ledger: SimLedger, time: VirtualTime): Promise<string[]> {
  const found: string[] = []
  for (const logId of new Set(ledger.appends.map((a) => a.logId))) {
    // No timer fires now: what the store holds is compared with what landed, as the world stopped.
    found.push(...checkLog(logId, await time.real(() => readAll(store, logId)), ledger.records(logId)))
  }
  return found
}
