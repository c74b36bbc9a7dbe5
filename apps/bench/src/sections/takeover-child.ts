/**
 * One process of the recovery-latency section: `node takeover-child.js '<TakeoverJob JSON>'`.
 * It opens the store, makes its host (`drive`) or worker (`resume`), prints `ready`, and
 * then drives the job's session into a step that never returns, or resumes sessions as a
 * worker with its default timings. `step <name>` is printed when a step's function starts.
 */
import { toolDefinition } from '@tanstack/ai'
import { createHost, createWorker, defineHarness, durableTool } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { childAccess } from '../targets/child-access.js'
import type { ChildConnection } from '../targets/target.js'

export interface TakeoverJob {
  connection: ChildConnection
  sessionId: string
  /** The process slot: the host id of `drive`, the worker id of `resume`. */
  slot: string
  role: 'drive' | 'resume'
}

const job = JSON.parse(process.argv[2] ?? '') as TakeoverJob
const print = (line: string) => process.stdout.write(`${line}\n`)

// A charge that lands, then an invoice call that hangs: the driver is killed inside it.
const pay = durableTool(
  toolDefinition({ name: 'pay', description: 'Charge, then send the invoice', inputSchema: z.object({ order: z.string() }) }),
  async ({ order }, { step }) => {
    const charge = await step.do(`charge:${order}`, async () => {
      print('step charge')
      return { id: `ch_${order}` }
    })
    await step.do(`invoice:${charge.id}`, () => {
      print('step invoice')
      return new Promise<void>(() => {})
    })
    return { charged: charge.id }
  },
)
const harness = defineHarness({
  name: 'takeover',
  adapter: scriptedText(({ messages }) =>
    messages.at(-1)?.role === 'user' ? { text: '', toolCalls: [{ name: 'pay', args: { order: job.sessionId } }] } : 'Paid.',
  ),
  tools: [pay],
})

const access = await childAccess(job.connection)
const store = access.createStore()
const host = job.role === 'drive' ? createHost({ store, harnesses: harness, hostId: job.slot }) : undefined
const worker = job.role === 'resume' ? createWorker({ store, harnesses: harness, workerId: job.slot }) : undefined
// The SQL stores prepare their statements here, as an app's start-up would.
await (store as { migrate?: () => Promise<unknown> }).migrate?.()
print('ready')
if (host) {
  const session = await host.open({ sessionId: job.sessionId })
  for await (const _ of session.send('pay')) {
  }
}
worker?.start()
