import type { LogEntry } from '@tanstack/ai-harness/store'
import type { LedgerEntry } from '../services/ledger.js'
import type { CrashReport } from '../session/crash-points.js'
import type { StoreConfig, StoreKind } from '../store/store-config.js'
import type { Counts, OrderSummary } from './summary.js'
import { formatTimeline, type TimelineMark } from './timeline.js'

/** How the processes played the story. */
export interface Story {
  /** The crash, if one was made: where, which process, which signal. */
  crash: (CrashReport & { pid: number; signal: string | undefined; simulated: boolean }) | undefined
  placedBy: number
  resumedBy: number | undefined
  /** The resuming process found the last turn cut. */
  neededRecovery: boolean
  /**
   * When a second process resumed: how long after the kill it had the session open (its
   * start and its store's start included), and how much of that it waited for the dead
   * process's lease (0 where the store proves the dead process dead).
   */
  takeover?: { afterKillMs: number; leaseWaitMs: number }
  answer: string
}

/** The whole report of a run: what `--json` prints, and what the text summary is made from. */
export interface RunReport {
  ok: boolean
  sessionId: string
  store: { kind: StoreKind; description: string }
  dataDir: string
  model: string
  prompt: string
  orders: OrderSummary[]
  counts: Counts
  problems: string[]
  story: Story
  /** The calls billing and the mailer received for this session, oldest first. */
  ledger: LedgerEntry[]
  /** The session log. */
  entries: LogEntry[]
  durationMs: number
}

/** The text summary printed on stdout. */
export function printRunSummary(report: RunReport, config: StoreConfig): string {
  const { story, counts } = report
  const out: string[] = []
  out.push('', `Checkout: session ${report.sessionId}`, `  store  ${report.store.description}`, `  model  ${report.model}`, '')
  out.push('What happened')
  const charged = report.ledger.filter((e) => e.op === 'charge' && e.outcome === 'done' && e.pid === story.placedBy)
  out.push(
    `  1. ${who(story.placedBy, story)} got "${report.prompt}"` +
      (charged.length > 0 ? ` and charged ${charged.map((e) => e.detail.chargeId).join(', ')}` : ''),
  )
  if (story.crash) {
    const how = story.crash.simulated
      ? 'its store was cut off (a simulated crash: the memory store cannot outlive a process)'
      : `it was killed with ${story.crash.signal}`
    out.push(`  2. at the crash point ${story.crash.point} (${story.crash.detail}) ${how}`)
    out.push(
      `  3. ${who(story.resumedBy, story)} reopened the session, ${story.neededRecovery ? 'found its last turn cut, and resumed it from the log' : 'found nothing to resume'}`,
    )
    if (story.takeover) out.push(`     takeover: ${takeoverText(story.takeover)}`)
  } else {
    out.push('  2. no crash was asked for (--crash none): the turn ran to the end')
  }
  out.push('')
  const rolledBack = report.orders.some((o) => o.refunds > 0)
  out.push(
    report.ok
      ? rolledBack
        ? 'Result: OK, the invoice failed and each charge was refunded once (undo)'
        : 'Result: OK, exactly one charge and one invoice per order'
      : 'Result: FAILED',
  )
  for (const problem of report.problems) out.push(`  ! ${problem}`)
  const refused = counts.duplicatesRefused
  out.push(`  charges made        ${counts.charges}`)
  out.push(`  invoices sent       ${counts.invoices}`)
  if (counts.refunds > 0) out.push(`  charges refunded    ${counts.refunds}`)
  out.push(`  emails sent         ${counts.emails}`)
  out.push(
    `  duplicates refused  ${refused.total}` +
      (refused.total > 0 ? ` (charges ${refused.charges}, invoices ${refused.invoices}, emails ${refused.emails})` : ''),
  )
  for (const o of report.orders) {
    out.push(
      `  order ${o.orderId}: ${o.charges} charge${o.charges === 1 ? '' : 's'}${o.chargeIds.length ? ` (${o.chargeIds.join(', ')})` : ''}, ${o.invoices} invoice${o.invoices === 1 ? '' : 's'}${o.refunds > 0 ? `, ${o.refunds} refund${o.refunds === 1 ? '' : 's'}` : ''}`,
    )
  }
  if (report.story.answer !== '') {
    out.push('', "The model's answer")
    for (const line of report.story.answer.split('\n')) out.push(`  ${line}`)
  }
  const marks: TimelineMark[] = []
  if (story.crash?.lastSeq !== undefined) {
    const crashed = story.crash.simulated
      ? 'the store died here (simulated crash)'
      : `${who(story.crash.pid, story)} killed with ${story.crash.signal} here`
    marks.push({ afterSeq: story.crash.lastSeq, text: `${crashed}; ${who(story.resumedBy, story)} resumed from the log` })
  }
  out.push('', `Session log: ${report.entries.length} records`)
  out.push(...formatTimeline(report.entries, marks))
  const again =
    config.kind === 'memory'
      ? 'The memory store kept nothing after this process; run with --store pglite to print the log again later.'
      : `Print it again: checkout log ${report.sessionId}${storeFlags(config, report.dataDir)}`
  out.push('', again, `Took ${(report.durationMs / 1000).toFixed(1)} s`, '')
  return out.join('\n')
}

function takeoverText({ afterKillMs, leaseWaitMs }: NonNullable<Story['takeover']>): string {
  const lease =
    leaseWaitMs === 0
      ? "no wait for process 1's lease (the store proved process 1 dead)"
      : `${leaseWaitMs} ms of it waiting for process 1's lease to run out`
  return `the session was open ${afterKillMs} ms after the kill, process 2's start included; ${lease}`
}

function who(pid: number | undefined, story: Story): string {
  if (pid === undefined) return 'nobody'
  if (story.crash?.simulated) return `this process (pid ${pid})`
  return `${pid === story.placedBy ? 'process 1' : 'process 2'} (pid ${pid})`
}

/** The store flags that find this session again (never a database URL: it may hold a password). */
function storeFlags(config: StoreConfig, dataDir: string): string {
  const flags: string[] = []
  switch (config.kind) {
    case 'postgres':
      flags.push('--store postgres', `--pg-schema ${config.schema}`)
      break
    case 'dynamodb':
      flags.push(
        '--store dynamodb',
        `--table ${config.tableName}`,
        config.endpoint ? `--endpoint ${config.endpoint}` : `--region ${config.region}`,
      )
      break
    case 's3':
      flags.push(
        '--store s3',
        `--bucket ${config.bucket}`,
        `--prefix ${config.prefix}`,
        config.endpoint ? `--endpoint ${config.endpoint}` : `--region ${config.region}`,
      )
      break
    case 'pglite':
      flags.push(`--data-dir ${JSON.stringify(dataDir)}`)
      break
  }
  return flags.map((f) => ` ${f}`).join('')
}
