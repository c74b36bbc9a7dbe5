import type { SimPlan } from './sim-plan.js'
import { runSimWorld, type SimReport, type SimWorldOptions } from './sim-world.js'

/** The smaller plans to try in place of `plan`, smallest change first. */
function candidates(plan: SimPlan): SimPlan[] {
  const out: SimPlan[] = []
  plan.sessions.forEach((_, i) => {
    if (plan.sessions.length > 1) out.push({ ...plan, sessions: plan.sessions.filter((_, j) => j !== i) })
  })
  if (plan.renewalOutage) out.push({ ...plan, renewalOutage: null })
  for (const key of ['crash', 'hang', 'loseReply', 'fail'] as const) {
    if (plan.faults[key] > 0) out.push({ ...plan, faults: { ...plan.faults, [key]: 0 } })
  }
  plan.sessions.forEach((s, i) => {
    for (const key of ['handOffAt', 'cancelAt', 'deleteAt'] as const) {
      if (s[key] === undefined) continue
      const { [key]: _dropped, ...rest } = s
      out.push({ ...plan, sessions: plan.sessions.map((t, j) => (j === i ? rest : t)) })
    }
  })
  const used = Math.max(0, ...plan.sessions.map((s) => s.host), plan.renewalOutage?.host ?? 0)
  if (plan.hosts > used + 1) out.push({ ...plan, hosts: used + 1, skews: plan.skews.slice(0, used + 1) })
  if (plan.skews.some((s) => s !== 0)) out.push({ ...plan, skews: plan.skews.map(() => 0) })
  return out
}

/**
 * Shrinks a failing world: tries smaller plans with the same seed (fewer sessions,
 * faults, hosts, hand-offs, cancels and deletes; no skew) and keeps each one that still
 * breaks an invariant, until none does. Returns the smallest failing report found.
 */
export async function shrinkWorld(
  options: SimWorldOptions,
  failing: SimReport,
  progress: (report: SimReport) => void = () => {},
): Promise<SimReport> {
  let best = failing
  for (let improved = true; improved; ) {
    improved = false
    for (const plan of candidates(best.plan)) {
      const report = await runSimWorld({ ...options, seed: best.seed, plan })
      if (report.violations.length > 0) {
        best = report
        improved = true
        progress(report)
        break
      }
    }
  }
  return best
}

/** A plan as one command-line word (base64url JSON), for a replay command. */
export function encodePlan(plan: SimPlan): string {
  return Buffer.from(JSON.stringify(plan)).toString('base64url')
}

/** The plan a replay command's `--plan` word holds (see `encodePlan`). */
export function decodePlan(text: string): SimPlan {
  return JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as SimPlan
}
