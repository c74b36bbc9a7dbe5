import type { SimRandom } from './random.js'
import type { SimFaults } from './sim-store.js'
import { SIM_WORKLOADS, type SimWorkload } from './sim-workloads.js'

/** One session of a world: what it runs, where and when it starts, and what happens to it. */
export interface SimSessionPlan {
  readonly id: string
  readonly workload: SimWorkload
  /** Virtual ms after the world starts. */
  readonly at: number
  /** The host its client opens it on (an index into the hosts). */
  readonly host: number
  readonly handOffAt?: number
  readonly cancelAt?: number
  readonly deleteAt?: number
  /** The client submits its prompt (`host.submit`, then `host.drive`) and reads the turn's durable stream, reconnecting now and then. */
  readonly submit?: boolean
}

/**
 * The shape of a world, drawn from its seed: its hosts, their clock skews, the faults
 * and when they stop, and its sessions. A shrunk world is a smaller plan with the same
 * seed; the schedule within it still follows from the seed.
 */
export interface SimPlan {
  readonly hosts: number
  /** Each host's clock minus the world's, in ms: within the documented bound. */
  readonly skews: readonly number[]
  readonly faults: SimFaults
  /** Faults (and crashes) stop this many virtual ms after the start; then every session must finish. */
  readonly faultsForMs: number
  /** A host whose lease renewals fail (or hang: `hang`) in this window while its other calls work. */
  readonly renewalOutage: { readonly host: number; readonly from: number; readonly to: number; readonly hang?: boolean } | null
  readonly sessions: readonly SimSessionPlan[]
}

/** The lease length of a simulated host, in virtual ms. */
export const SIM_LEASE_MS = 3_000

/** The largest clock skew of a host either way: two hosts differ by at most twice this, well inside `leaseMs - leaseMs / 3` minus a store call. */
export const SIM_MAX_SKEW_MS = 300

/** Draws a world's plan from its random source. */
export function planWorld(random: SimRandom): SimPlan {
  const hosts = random.int(1, 3)
  const faulty = random.chance(0.8)
  const faults: SimFaults = faulty
    ? {
        fail: random.pick([0, 0.01, 0.03]),
        loseReply: random.pick([0, 0.01, 0.03]),
        hang: random.pick([0, 0.005, 0.01]),
        crash: random.pick([0, 0.003, 0.01]),
        maxDelayMs: random.pick([2, 10, 40]),
      }
    : { fail: 0, loseReply: 0, hang: 0, crash: 0, maxDelayMs: random.pick([0, 5]) }
  const faultsForMs = random.int(2_000, 20_000)
  const sessions: SimSessionPlan[] = []
  const count = random.int(1, 5)
  for (let i = 0; i < count; i++) {
    const at = random.int(0, faultsForMs)
    const workload = random.pick(SIM_WORKLOADS)
    sessions.push({
      id: `s${i + 1}`,
      workload,
      at,
      host: random.int(0, hosts - 1),
      ...(random.chance(0.15) ? { handOffAt: at + random.int(0, 200) } : {}),
      // An undo-cancel session (or one whose child agent runs undo-cancel) is always cancelled, most often while it holds (its charge done): the cancel rolls it back.
      ...(random.chance(0.1) || workload === 'undo-cancel' || workload === 'undo-agent-cancel'
        ? { cancelAt: at + random.int(0, 3_000) }
        : {}),
      ...(random.chance(0.08) ? { deleteAt: at + random.int(0, 3_000) } : {}),
      ...(random.chance(0.3) ? { submit: true } : {}),
    })
  }
  return {
    hosts,
    skews: Array.from({ length: hosts }, () => random.int(-SIM_MAX_SKEW_MS, SIM_MAX_SKEW_MS)),
    faults,
    faultsForMs,
    renewalOutage: faulty && random.chance(0.4) ? planOutage(random, hosts, sessions, faultsForMs) : null,
    sessions,
  }
}

/**
 * A renewal outage, most often on the host of a session and beginning soon after that
 * session starts, so a turn that runs for seconds meets it (a host whose appends work while
 * its lease runs out); sometimes anywhere. Half the outages hang instead of failing.
 */
function planOutage(
  random: SimRandom,
  hosts: number,
  sessions: readonly SimSessionPlan[],
  faultsForMs: number,
): NonNullable<SimPlan['renewalOutage']> {
  const hang = random.chance(0.5)
  const target = random.chance(0.7) ? random.pick(sessions) : undefined
  const from = target ? Math.min(target.at + random.int(0, 1_500), faultsForMs) : random.int(0, faultsForMs)
  return { host: target?.host ?? random.int(0, hosts - 1), from, to: faultsForMs, ...(hang ? { hang } : {}) }
}

/** True when a plan injects no fault at all: then every step's effect happens at most once. */
export function faultFree(plan: SimPlan): boolean {
  const f = plan.faults
  return (
    f.fail === 0 &&
    f.loseReply === 0 &&
    f.hang === 0 &&
    f.crash === 0 &&
    plan.renewalOutage === null &&
    !plan.sessions.some((s) => s.workload === 'poison')
  )
}
