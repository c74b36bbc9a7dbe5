import { EventType, type StreamChunk } from '@tanstack/ai'
import { createHost, type HarnessStore, isHarnessError } from '@tanstack/ai-harness'
import type { LeaseHeldError, LogEntry } from '@tanstack/ai-harness/store'
import { checkoutHarness } from '../agent/harness.js'
import type { ModelChoice } from '../agent/model.js'
import { CliError, ExitCode, messageOf, usageError } from '../exit-codes.js'
import type { Progress } from '../progress.js'
import { BillingService } from '../services/billing.js'
import { Mailer } from '../services/mailer.js'
import { type CrashPoint, type OnCrashPoint, watchStore } from './crash-points.js'

/**
 * The host id of every checkout process, as the log shows it: one process slot, run
 * again after a crash. A lease belongs to one process, not to the id; on PGlite and
 * PostgreSQL process 2 takes the session of the dead process 1 at once (the store proves
 * process 1 dead), on DynamoDB and S3 it waits for process 1's lease to run out.
 */
export const HOST_ID = 'checkout-cli'

/** One process's part of the story. Plain JSON: the parent hands it to a child. */
export interface SessionJob {
  sessionId: string
  /** `start` sends the prompt; `resume` finishes the cut turn from the log. */
  mode: 'start' | 'resume'
  prompt: string
  dataDir: string
  model: ModelChoice
  crash: CrashPoint
  leaseMs: number
  /** `--ask`: the checkout tool asks the customer to confirm the amount before it charges. */
  ask?: boolean
  /** `--fail-invoice`: the invoice service refuses the invoice, so the checkout rolls its charge back (`undo`). */
  failInvoice?: boolean
}

/** What a process saw of its turn. */
export interface SessionOutcome {
  /** The session's last turn was cut when this process opened it. */
  neededRecovery: boolean
  /** The model's final text, as streamed. */
  answer: string
  /** Tool calls the model made in this process, by name. */
  toolCalls: string[]
  /** The whole session log as this process left it, read back from the store. */
  entries: LogEntry[]
  /** The turn parked: it waits for a person's answer (`--ask`). */
  parked: boolean
  /** When this process had the session open (its lease taken), in ms since the epoch. */
  openedAt: number
  /** How long it waited for another process's lease to run out before that. */
  leaseWaitMs: number
}

/**
 * Runs one process's part: opens the session on the store, sends the prompt or resumes
 * the cut turn, streams it with progress lines, and closes the session. At the crash
 * point, `onCrash` takes over and this never returns.
 */
export async function runSession(store: HarnessStore, job: SessionJob, progress: Progress, onCrash: OnCrashPoint): Promise<SessionOutcome> {
  const watched = watchStore(store, job.crash, onCrash)
  const billing = new BillingService({
    dataDir: job.dataDir,
    log: progress,
    afterCharge:
      job.crash === 'charge-unlogged'
        ? (entry) =>
            onCrash({
              point: 'charge-unlogged',
              detail: `billing charged ${entry.detail.chargeId}, but the step is not in the log`,
              lastSeq: watched.lastSeq(),
            })
        : undefined,
    failInvoice: job.failInvoice === true,
  })
  const mailer = new Mailer({
    dataDir: job.dataDir,
    log: progress,
    afterSend:
      job.crash === 'email-unlogged'
        ? (entry) =>
            onCrash({
              point: 'email-unlogged',
              detail: `the mailer sent ${entry.detail.mailId}, but the step is not in the log`,
              lastSeq: watched.lastSeq(),
            })
        : undefined,
  })
  const harness = checkoutHarness(job.model, { billing, mailer, log: progress }, { ask: job.ask === true })
  const host = createHost({ store: watched.store, harnesses: harness, hostId: HOST_ID, leaseMs: job.leaseMs })

  // Placing the order again in an existing session would charge again (new tool call, new key): refuse.
  if (job.mode === 'start' && (await store.read(job.sessionId, { limit: 1 })).length > 0) {
    throw usageError(`Session ${job.sessionId} already exists. Print it with: checkout log ${job.sessionId}; or pick another --session.`)
  }
  let session: Awaited<ReturnType<typeof host.open>>
  const waitFrom = Date.now()
  try {
    session = await openWhenFree(host, job, progress)
  } catch (error) {
    if (isHarnessError(error, 'LEASE_HELD')) throw new CliError(ExitCode.Failed, messageOf(error), { cause: error })
    throw error
  }
  const openedAt = Date.now()
  const leaseWaitMs = leaseWaits.get(session) ?? 0
  if (job.mode === 'resume') progress(`session open ${openedAt - waitFrom} ms after this process asked for it`)
  const neededRecovery = session.needsRecovery
  try {
    let stream: AsyncIterable<StreamChunk>
    const names = new Map<string, string>()
    if (job.mode === 'start') {
      progress(`user: ${job.prompt}`)
      stream = session.send(job.prompt)
    } else {
      // A resumed call runs again without a fresh TOOL_CALL_START; its name is in the log.
      for (const { record } of await session.entries()) {
        if (record.type !== 'harness.assistant' || !Array.isArray(record.toolCalls)) continue
        for (const call of record.toolCalls as Array<{ id: string; name: string }>) names.set(call.id, call.name)
      }
      progress(neededRecovery ? 'the last turn was cut: resuming it by the replay rules' : 'the session has no cut turn: nothing to resume')
      stream = session.resume()
    }
    const seen = await follow(stream, progress, names)
    if (session.status === 'parked') progress(`the turn waits for a person: ${session.parked?.reason ?? 'a question'}`)
    return { neededRecovery, ...seen, entries: await session.entries(), parked: session.status === 'parked', openedAt, leaseWaitMs }
  } finally {
    await session.close()
  }
}

/** Consumes a turn's chunks, printing what a user would want to watch. */
async function follow(
  stream: AsyncIterable<StreamChunk>,
  progress: Progress,
  names: Map<string, string>,
): Promise<Pick<SessionOutcome, 'answer' | 'toolCalls'>> {
  let answer = ''
  const toolCalls: string[] = []
  for await (const chunk of stream) {
    const event = chunk as StreamChunk & Record<string, unknown>
    switch (chunk.type) {
      case EventType.TOOL_CALL_START:
        names.set(String(event.toolCallId), String(event.toolCallName ?? event.toolName ?? 'tool'))
        break
      case EventType.TOOL_CALL_END: {
        const name = names.get(String(event.toolCallId)) ?? String(event.toolCallName ?? event.toolName ?? 'tool')
        toolCalls.push(name)
        progress(`model calls ${name} ${JSON.stringify(event.input ?? {})}`)
        break
      }
      case EventType.TOOL_CALL_RESULT: {
        const name = names.get(String(event.toolCallId)) ?? 'tool'
        progress(`${name} returned ${clip(String(event.content ?? ''))}`)
        break
      }
      case EventType.TEXT_MESSAGE_CONTENT:
        answer += String(event.delta ?? '')
        break
      case EventType.RUN_ERROR:
        throw new CliError(
          ExitCode.Failed,
          `The model run failed: ${String(event.message ?? (event.error as { message?: string })?.message ?? 'unknown error')}`,
        )
    }
  }
  if (answer !== '') for (const line of answer.split('\n')) progress(`model: ${line}`)
  return { answer, toolCalls }
}

const clip = (text: string, max = 160) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** How long each opened session waited for another process's lease. */
const leaseWaits = new WeakMap<object, number>()

/**
 * Opens the session. On PGlite and PostgreSQL the store proves process 1 dead (its folder
 * lock, its liveness connection), so the open takes its lease at once. On DynamoDB and S3
 * nothing can tell a dead process from a slow one, so the process that resumes waits for
 * the lease of the process it replaces to run out.
 */
async function openWhenFree(host: ReturnType<typeof createHost>, job: SessionJob, progress: Progress) {
  const giveUpAt = Date.now() + 2 * job.leaseMs + 1_000
  let waited = 0
  for (;;) {
    try {
      const session = await host.open({ sessionId: job.sessionId })
      leaseWaits.set(session, waited)
      return session
    } catch (error) {
      if (job.mode !== 'resume' || !isHarnessError(error, 'LEASE_HELD') || Date.now() > giveUpAt) throw error
      const until = (error as LeaseHeldError).expiresAt ?? Date.now() + 250
      progress(`the session is still leased by process 1 until ${new Date(until).toISOString()}; waiting for the lease to run out`)
      const pause = Math.max(50, until - Date.now() + 50)
      await new Promise((resolve) => setTimeout(resolve, pause))
      waited += pause
    }
  }
}
