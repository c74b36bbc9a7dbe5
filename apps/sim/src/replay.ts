import { encodePlan, type SimReport } from '@tanstack/ai-harness/testing/node'
import type { SimStoreName } from './backends.js'

/** The one-line command that replays a world exactly (same schedule, same faults), and its plan when it was shrunk. */
export function replayCommand(store: SimStoreName, report: SimReport, shrunk = false): string {
  const plan = shrunk ? ` --plan ${encodePlan(report.plan)}` : ''
  return `pnpm sim -- --store ${store} --seed ${report.seed}${plan}`
}

/** A failing world, as the CLI and the tests print it: its seed, its violations, the replay command. */
export function describeFailure(store: SimStoreName, report: SimReport, shrunk?: SimReport): string {
  const lines = [
    `world ${report.seed} on ${store} broke ${report.violations.length} invariant(s):`,
    ...report.violations.map((v) => `  - ${v}`),
  ]
  lines.push(`replay: ${replayCommand(store, report)}`)
  if (shrunk) {
    lines.push(`shrunk to ${shrunk.plan.sessions.length} session(s) on ${shrunk.plan.hosts} host(s): ${JSON.stringify(shrunk.plan)}`)
    lines.push(`replay the shrunk world: ${replayCommand(store, shrunk, true)}`)
  }
  return lines.join('\n')
}
