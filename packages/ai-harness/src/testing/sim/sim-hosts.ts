import type { Clock, HarnessStore } from '../../contract/types.js'
import { createHost, type Host } from '../../runtime/host.js'
import { createWorker, type Worker } from '../../runtime/worker.js'
import type { SimRandom } from './random.js'
import type { SimLedger } from './sim-ledger.js'
import { SIM_LEASE_MS, type SimPlan } from './sim-plan.js'
import { type SimProcess, simStore } from './sim-store.js'
import { simHarnesses } from './sim-workloads.js'
import type { VirtualTime } from './virtual-time.js'

const codeOf = (error: unknown) => String((error as { code?: unknown })?.code ?? 'no code')

/** Opens a store instance over a world's one data set, as one process would, with that process's clock. */
export type OpenSimStore = (clock: Clock) => HarnessStore

/** What every process of a world shares. */
export interface SimShared {
  readonly time: VirtualTime
  readonly random: SimRandom
  readonly ledger: SimLedger
  readonly plan: SimPlan
  readonly open: OpenSimStore
  /** True while the world injects faults. */
  faultsOn(): boolean
  /** Virtual ms since the world started: the plan's times count from there. */
  elapsed(): number
}

/**
 * One machine of a world: a process (a store instance, a host and a worker) that can
 * die at any store call and starts again as a new process a little later, with the
 * machine's skewed clock.
 */
export class SimMachine {
  #generation = 0
  #process!: SimProcess & { name: string }
  host!: Host
  worker!: Worker
  crashes = 0

  constructor(
    readonly index: number,
    readonly shared: SimShared,
  ) {
    this.#start()
  }

  get alive(): boolean {
    return this.#process.alive
  }

  get processName(): string {
    return this.#process.name
  }

  #start(): void {
    const { shared, index } = this
    const skew = shared.plan.skews[index] ?? 0
    const clock: Clock = { now: () => shared.time.now + skew }
    let alive = true
    const name = `h${index}.${this.#generation++}`
    const outage = shared.plan.renewalOutage
    const process: SimProcess & { name: string } = {
      name,
      get alive() {
        return alive
      },
      crash: () => {
        if (!alive) return
        alive = false
        this.crashes++
        shared.ledger.crashed(name)
        // The machine boots again a little later, as a new process.
        shared.time.at(shared.random.int(100, 3_000), () => this.#start())
      },
      faultsOn: () => shared.faultsOn(),
      renewalsFail: () =>
        outage !== null && outage.host === index && shared.elapsed() >= outage.from && shared.elapsed() < outage.to
          ? outage.hang
            ? 'hang'
            : 'fail'
          : false,
    }
    this.#process = process
    const store = simStore(shared.open(clock), { ...shared, faults: shared.plan.faults }, process)
    const harnesses = simHarnesses({ time: shared.time, random: shared.random, ledger: shared.ledger, process, processName: name })
    const timings = { leaseMs: SIM_LEASE_MS, stopTimeoutMs: 1_000 }
    this.host = createHost({ store, harnesses, clock, hostId: name, ...timings })
    this.worker = createWorker({
      store,
      harnesses,
      clock,
      workerId: `${name}-worker`,
      pollMs: 500,
      holdMs: 4_000,
      onError: (sessionId, error) =>
        process.alive &&
        shared.ledger.note(`${name} worker: resuming ${sessionId} failed: ${codeOf(error)} ${String(error).slice(0, 300)}`),
      ...timings,
    })
    this.worker.start()
  }
}
