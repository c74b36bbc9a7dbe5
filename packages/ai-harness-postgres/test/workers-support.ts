/**
 * Shared by the workers test (`workers.test.ts`) and its worker processes
 * (`worker-child.ts`): the errand harness, whose one durable tool sleeps, charges,
 * maybe sleeps again, maybe asks a person, and sends the invoice, on the PostgreSQL
 * billing of `crash-support.ts`.
 */
import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, type Harness } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import type { PgBilling } from './crash-support.js'

/** What the model passes to `errand`: the whole plan of one session. */
export interface ErrandArgs {
  orderId: string
  /** The first thing the tool does: a sleep that parks at once, so the workers run everything after it. */
  queueMs: number
  /** A second sleep between the charge and the invoice; 0 for none. */
  napMs: number
  /** Whether the tool asks a person how to send the invoice. */
  ask: boolean
}

export const sessionIdOf = (i: number) => `errand-session-${i}`
export const orderIdOf = (i: number) => `o${i}`
export const promptOf = (args: ErrandArgs) => `errand ${JSON.stringify(args)}`
export const FINAL_ANSWER = 'Your errand is done.'
export const ASK_NAME = 'channel'
export const CHANNELS = ['email', 'post'] as const
export type Channel = (typeof CHANNELS)[number]

/** The question's schema; `host.answer` checks answers against its logged JSON Schema. */
const CHANNEL_SCHEMA = z.object({ channel: z.enum(CHANNELS) })

/** The record the errand tool appends with its result: `by` is the process that settled the call. */
export type ErrandReceipt = { type: 'app.receipt'; orderId: string; chargeId: string; channel: Channel; by: string }

const errandDefinition = () =>
  toolDefinition({
    name: 'errand',
    description: 'Charge an order, wait, maybe ask how to send the invoice, and send it',
    inputSchema: z.object({ orderId: z.string(), queueMs: z.number(), napMs: z.number(), ask: z.boolean() }),
  })

export interface ErrandOptions {
  billing: PgBilling
  /** This process's host or worker id: step values and the receipt name it, so the test can tell who ran what. */
  by: string
  /** Called when a step's function starts, with its idempotency key (the worker prints it for the kill). */
  onStep?: (idempotencyKey: string) => void
}

/**
 * The errand harness. `parkAfterMs: 0`: every sleep parks the session with a wakeup, so
 * each wait goes through the store and a worker, never through a timer in the process.
 */
export function errandHarness({ billing, by, onStep }: ErrandOptions): Harness {
  const errand = durableTool(errandDefinition(), async (input, { step, append }) => {
    const { orderId, queueMs, napMs, ask } = input
    await step.sleep('queue', queueMs)
    const charge = await step.do(`charge:${orderId}`, async ({ idempotencyKey }) => {
      onStep?.(idempotencyKey)
      const { id } = await billing.charge(orderId, idempotencyKey)
      return { id, by }
    })
    if (napMs > 0) await step.sleep('cool-off', napMs)
    let channel: Channel = 'email'
    if (ask) {
      const answer = await step.ask({
        name: ASK_NAME,
        message: `How should the invoice for ${orderId} go out?`,
        schema: CHANNEL_SCHEMA,
      })
      channel = answer.channel
    }
    await step.do(`invoice:${charge.id}`, async ({ idempotencyKey }) => {
      onStep?.(idempotencyKey)
      await billing.sendInvoice(charge.id, idempotencyKey)
      return { channel, by }
    })
    const receipt: ErrandReceipt = { type: 'app.receipt', orderId, chargeId: charge.id, channel, by }
    append([receipt])
    return { chargeId: charge.id, channel }
  })
  const model = scriptedText(({ messages }) => {
    const last = messages[messages.length - 1]
    if (last?.role === 'user') {
      const args = JSON.parse(String(last.content).replace(/^errand /, '')) as ErrandArgs
      return { text: 'On it.', toolCalls: [{ name: 'errand', args: { ...args } }] }
    }
    return FINAL_ANSWER
  })
  return defineHarness({ name: 'errands', adapter: model, tools: [errand], parkAfterMs: 0 })
}

/** What the test passes a worker process, as JSON in its first argument. */
export interface WorkerTask {
  schema: string
  workerId: string
  pollMs: number
  leaseMs: number
  holdMs: number
  batchSize: number
  /** Added to every wakeup write (schedule, cancel) of the worker: a slow link to the database. Default 0. */
  wakeupLatencyMs?: number
}
