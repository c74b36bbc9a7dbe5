import { createHost, type HarnessStore } from '@tanstack/ai-harness'
import { openWaits, readAndFold } from '@tanstack/ai-harness/log'
import { startInspector } from '@tanstack/ai-harness-inspector'
import { checkoutHarness } from '../agent/harness.js'
import { ORDER_AMOUNT_EUR } from '../agent/tools.js'
import { CliError, ExitCode, usageError } from '../exit-codes.js'
import type { Progress } from '../progress.js'
import { BillingService } from '../services/billing.js'
import { Mailer } from '../services/mailer.js'
import type { SessionJob } from './run-session.js'

/** `--answer`: "yes" confirms the quoted amount; anything else is the answer as JSON. */
export function parseAnswer(text: string | undefined): unknown {
  if (text === undefined) return undefined
  if (text.trim().toLowerCase() === 'yes') return { amount: ORDER_AMOUNT_EUR }
  try {
    return JSON.parse(text)
  } catch {
    throw usageError(`--answer takes "yes" or the answer as JSON, e.g. {"amount":${ORDER_AMOUNT_EUR}}; got ${JSON.stringify(text)}.`)
  }
}

/** How often the waiting program looks at the log for the answer. */
const POLL_MS = 300

/**
 * Answers the open questions of the session: with `answer` at once (the non-interactive run),
 * or by serving the inspector and waiting until a person has answered them all there. The
 * session is resumed afterwards by the caller, from the log.
 */
export async function settleQuestions(store: HarnessStore, job: SessionJob, answer: unknown, progress: Progress): Promise<void> {
  // This host only answers (and lets the inspector cancel): its services are never called.
  const services = {
    billing: new BillingService({ dataDir: job.dataDir, log: progress }),
    mailer: new Mailer({ dataDir: job.dataDir, log: progress }),
  }
  const host = createHost({ store, harnesses: checkoutHarness(job.model, services, { ask: true }), hostId: 'checkout-cli-answers' })
  const open = async () => {
    const state = await readAndFold(store, job.sessionId)
    if (!state.openTurn)
      throw new CliError(ExitCode.Failed, `The turn of session ${job.sessionId} was cancelled while it waited for the answer.`)
    return openWaits(job.sessionId, state).questions
  }
  if (answer !== undefined) {
    for (const question of await open()) {
      progress(`question: ${question.message}`)
      progress(`answer (--answer): ${JSON.stringify(answer)}`)
      await host.answer({ sessionId: job.sessionId, questionId: question.questionId, answer })
    }
    return
  }
  const inspector = await startInspector({ host })
  try {
    const questions = await open()
    for (const question of questions) progress(`question: ${question.message}`)
    progress(`answer it in the inspector: ${inspector.url}&session=${encodeURIComponent(job.sessionId)}`)
    progress('waiting for the answer (or run again with --answer yes)')
    while ((await open()).length > 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    progress('the question is answered; the session goes on')
  } finally {
    await inspector.close()
  }
}
