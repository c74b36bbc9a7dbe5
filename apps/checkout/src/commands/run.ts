import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import type { LogEntry } from '@tanstack/ai-harness/store'
import { createMemoryData, type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { chooseModel, describeModel } from '../agent/model.js'
import { orderPrompt } from '../agent/prompt.js'
import { CliError, ExitCode } from '../exit-codes.js'
import { type Progress, stderrProgress } from '../progress.js'
import { entriesOfSession, judge } from '../report/summary.js'
import { printRunSummary, type RunReport, type Story } from '../report/run-report.js'
import { billingLedgerPath } from '../services/billing.js'
import { readLedger } from '../services/ledger.js'
import { mailerLedgerPath } from '../services/mailer.js'
import type { CrashPoint } from '../session/crash-points.js'
import { parseAnswer, settleQuestions } from '../session/ask.js'
import { runInProcess } from '../session/in-process.js'
import { runSession, type SessionJob, type SessionOutcome } from '../session/run-session.js'
import { runChild } from '../session/spawn-child.js'
import { lockDataDir } from '../store/data-lock.js'
import { openStore } from '../store/open-store.js'
import { describeStore, type StoreConfig, type StoreFlags, storeConfigFrom } from '../store/store-config.js'
import { readSession } from './read-session.js'

/** The flags of the default command. */
export interface RunFlags extends StoreFlags {
  order: string[]
  email: string
  session?: string
  crash: CrashPoint
  model?: string
  leaseMs: number
  json?: boolean
  ask?: boolean
  answer?: string
  failInvoice?: boolean
}

/** The order placed when `--order` is not given. */
export const DEFAULT_ORDER = '42'

/**
 * The default command: places the order in a child process, kills it with SIGKILL at
 * the crash point, resumes the session in a fresh child, and prints the verdict.
 * Returns the exit code.
 */
export async function runCommand(flags: RunFlags): Promise<number> {
  const started = performance.now()
  const progress = stderrProgress('checkout: ')
  const store = storeConfigFrom(flags, process.env)
  const orderIds = [...new Set(flags.order.length > 0 ? flags.order : [DEFAULT_ORDER])]
  const dataDir = resolve(flags.dataDir)
  const sessionId = flags.session ?? `order-${orderIds.join('-')}-${Date.now().toString(36)}${randomBytes(2).toString('hex')}`
  const model = chooseModel(process.env, flags.model)
  if (flags.answer !== undefined && !flags.ask) throw new CliError(ExitCode.Usage, '--answer answers the question of --ask: pass both.')
  const answer = parseAnswer(flags.answer)
  const job: SessionJob = {
    sessionId,
    mode: 'start',
    prompt: orderPrompt({ orderIds, email: flags.email }),
    dataDir,
    model,
    crash: flags.crash,
    leaseMs: flags.leaseMs,
    ask: flags.ask === true,
    failInvoice: flags.failInvoice === true,
  }
  mkdirSync(dataDir, { recursive: true })
  progress(`session ${sessionId}`)
  progress(`store: ${describeStore(store)}; ledgers in ${dataDir}`)
  progress(`model: ${describeModel(model)}`)
  progress(
    `crash: ${flags.crash === 'none' ? 'none' : `${flags.crash} (SIGKILL${store.kind === 'memory' ? ', simulated in-process for the memory store' : ''})`}`,
  )

  const lock = store.kind === 'pglite' ? await lockDataDir(dataDir) : undefined
  try {
    const { story, entries } = flags.ask
      ? store.kind === 'memory'
        ? await askedInProcess(job, answer, progress)
        : await askedWithChildren(store, job, answer, progress)
      : store.kind === 'memory'
        ? await inProcessStory(job, progress)
        : await childStory(store, job, progress)
    const ledger = entriesOfSession([...readLedger(billingLedgerPath(dataDir)), ...readLedger(mailerLedgerPath(dataDir))], sessionId)
    ledger.sort((a, b) => a.at.localeCompare(b.at))
    const verdict = judge(orderIds, ledger, entries, { failInvoice: flags.failInvoice === true })
    const report: RunReport = {
      ok: verdict.ok,
      sessionId,
      store: { kind: store.kind, description: describeStore(store) },
      dataDir,
      model: describeModel(model),
      prompt: job.prompt,
      orders: verdict.orders,
      counts: verdict.counts,
      problems: verdict.problems,
      story,
      ledger,
      entries,
      durationMs: Math.round(performance.now() - started),
    }
    if (flags.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    else process.stdout.write(printRunSummary(report, store))
    return verdict.ok ? ExitCode.Ok : ExitCode.Failed
  } finally {
    lock?.release()
  }
}

/** Two real processes: the first is killed at the crash point, the second resumes from the log. */
async function childStory(
  store: StoreConfig,
  job: SessionJob,
  progress: Progress,
  firstDoes = 'places the order',
): Promise<StoryAndLog & { parked: boolean }> {
  const first = await runChild({ ...job, store }, (pid) => progress(`process 1 (pid ${pid}) ${firstDoes}`))
  if (first.kind === 'done') {
    const story = { crash: undefined, placedBy: first.pid, resumedBy: undefined, neededRecovery: false, answer: first.outcome.answer }
    return { story, entries: first.outcome.entries, parked: first.outcome.parked }
  }
  const killedAt = Date.now()
  progress(`killed process 1 (pid ${first.pid}) with ${first.signal}: ${first.report.detail}`)
  const second = await runChild({ ...job, store, mode: 'resume', crash: 'none' }, (pid) =>
    progress(`process 2 (pid ${pid}) reopens session ${job.sessionId} and recovers it from the log`),
  )
  if (second.kind !== 'done') throw new CliError(ExitCode.Failed, 'The resuming process stopped at a crash point it should not have.')
  const story: Story = {
    crash: { ...first.report, pid: first.pid, signal: first.signal, simulated: false },
    placedBy: first.pid,
    resumedBy: second.pid,
    neededRecovery: second.outcome.neededRecovery,
    answer: second.outcome.answer,
    takeover: { afterKillMs: second.outcome.openedAt - killedAt, leaseWaitMs: second.outcome.leaseWaitMs },
  }
  // The last process read the log back from the store before it exited; PGlite is one
  // process's database, so reading it from here would cost another start of it.
  return { story, entries: second.outcome.entries, parked: second.outcome.parked }
}

/**
 * `--ask` with real processes: the asking process places the order and parks on the
 * question; this process answers it (`--answer`) or serves the inspector until a person
 * has, with the store open only here meanwhile (a PGlite folder has one process at a
 * time); then the crash story runs on the resumed session. Each later order asks again.
 */
async function askedWithChildren(store: StoreConfig, job: SessionJob, answer: unknown, progress: Progress): Promise<StoryAndLog> {
  const asking = await runChild({ ...job, store, crash: 'none' }, (pid) =>
    progress(`process (pid ${pid}) places the order; the checkout asks the customer to confirm the amount`),
  )
  if (asking.kind !== 'done') throw new CliError(ExitCode.Failed, 'The asking process stopped at a crash point it should not have.')
  let result: StoryAndLog & { parked: boolean } = {
    story: { crash: undefined, placedBy: asking.pid, resumedBy: undefined, neededRecovery: false, answer: asking.outcome.answer },
    entries: asking.outcome.entries,
    parked: asking.outcome.parked,
  }
  let crash = job.crash
  while (result.parked) {
    const opened = await openStore(store)
    try {
      await settleQuestions(opened.store, job, answer, progress)
    } finally {
      await opened.close()
    }
    const next = await childStory(store, { ...job, mode: 'resume', crash }, progress, 'resumes the answered session')
    // The crash is made once, in the first process after the answer: that one charges.
    result = crash === 'none' ? { ...next, story: { ...next.story, crash: result.story.crash ?? next.story.crash } } : next
    crash = 'none'
  }
  return result
}

/** `--ask` on the memory store: the same story in this process (the crash simulated, see `runInProcess`). */
async function askedInProcess(job: SessionJob, answer: unknown, progress: Progress): Promise<StoryAndLog> {
  progress(`this process (pid ${process.pid}) places the order; the checkout asks the customer to confirm the amount`)
  const data: MemoryData = createMemoryData()
  let outcome: SessionOutcome | undefined = await runSession(memoryStore({ data }), { ...job, crash: 'none' }, progress, async () => {
    throw new CliError(ExitCode.Failed, 'The asking run reached a crash point it should not have.')
  })
  let crash = job.crash
  let story: Story = { crash: undefined, placedBy: process.pid, resumedBy: undefined, neededRecovery: false, answer: outcome.answer }
  while (outcome?.parked) {
    await settleQuestions(memoryStore({ data }), job, answer, progress)
    const result = await runInProcess({ ...job, mode: 'resume', crash }, data, progress)
    if (result.crash) {
      story = { ...story, crash: { ...result.crash, pid: process.pid, signal: undefined, simulated: true }, resumedBy: process.pid }
    }
    outcome = result.second ?? result.first
    story = { ...story, neededRecovery: story.neededRecovery || (result.second?.neededRecovery ?? false), answer: outcome?.answer ?? '' }
    crash = 'none'
  }
  return { story, entries: await readSession({ kind: 'memory' }, job.sessionId, data) }
}

/** The memory store's story: one process, a simulated crash (see `runInProcess`). */
async function inProcessStory(job: SessionJob, progress: Progress): Promise<StoryAndLog> {
  progress(`this process (pid ${process.pid}) places the order`)
  const data = createMemoryData()
  const result = await runInProcess(job, data, progress)
  const story: Story = {
    crash: result.crash && { ...result.crash, pid: process.pid, signal: undefined, simulated: true },
    placedBy: process.pid,
    resumedBy: result.crash ? process.pid : undefined,
    neededRecovery: result.second?.neededRecovery ?? false,
    answer: (result.second ?? result.first)?.answer ?? '',
  }
  return { story, entries: await readSession({ kind: 'memory' }, job.sessionId, data) }
}

interface StoryAndLog {
  story: Story
  entries: LogEntry[]
}
