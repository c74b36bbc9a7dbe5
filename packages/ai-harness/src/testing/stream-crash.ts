import { type StreamChunk, toolDefinition } from '@tanstack/ai'
import { z } from 'zod'
import type { ManualClock } from '../contract/clock.js'
import type { HarnessStore } from '../contract/types.js'
import { decodeOffset } from '../streams/offsets.js'
import { RunStream } from '../streams/run-stream.js'
import { durableTool } from '../runtime/durable-tool.js'
import { defineHarness } from '../runtime/harness.js'
import { createHost } from '../runtime/host.js'
import { createWorker } from '../runtime/worker.js'
import { crashable } from './crashable-store.js'
import { scriptedText } from './scripted-adapter.js'

/** What {@link streamAcrossCrash} saw: a client's view of one turn whose host died mid-turn. */
export interface StreamCrashReport {
  /** The chunks the client read before its connection dropped, then after it reconnected with its last offset. */
  readonly beforeCrash: ReadonlyArray<{ offset: string; chunk: StreamChunk }>
  readonly afterReconnect: ReadonlyArray<{ offset: string; chunk: StreamChunk }>
  /** Everything the stream holds at the end. */
  readonly stored: ReadonlyArray<{ offset: string; chunk: StreamChunk }>
  /** How many times each side effect ran, by idempotency key. */
  readonly charges: number
  readonly invoices: number
}

const LEASE_MS = 30_000
const tick = () => new Promise((resolve) => setTimeout(resolve, 2))

/**
 * One turn of a submitted prompt, through a crash: host A drives a checkout (`charge`,
 * then `invoice`) and dies right after the charge is stored; a client reading the turn's
 * durable stream drops its connection; once A's lease expires a worker resumes the turn in
 * the same stream; the client reconnects with its last offset and reads to the end.
 * `openStore` gives a fresh store instance on the test's shared data; the clock is shared.
 */
export async function streamAcrossCrash(world: { openStore: () => Promise<HarnessStore>; clock: ManualClock }): Promise<StreamCrashReport> {
  const { clock } = world
  const charged = new Set<string>()
  const invoiced = new Set<string>()
  const harness = defineHarness({
    name: 'shop',
    adapter: scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'checkout', args: { cents: 500 } }] } : 'Paid and invoiced.',
    ),
    tools: [
      durableTool(
        toolDefinition({ name: 'checkout', description: 'Charges and invoices', inputSchema: z.object({ cents: z.number() }) }),
        async ({ cents }, { step }) => {
          const charge = await step.do('charge', ({ idempotencyKey }) => {
            charged.add(idempotencyKey)
            return `ch_${cents}`
          })
          const invoice = await step.do('invoice', ({ idempotencyKey }) => {
            invoiced.add(idempotencyKey)
            return `in_${charge}`
          })
          return { charge, invoice }
        },
      ),
    ],
  })
  const dying = crashable(await world.openStore())
  const hostA = createHost({ store: dying, harnesses: harness, clock, leaseMs: LEASE_MS, hostId: 'a' })
  dying.crashOnAppend((records) => records.some((r) => r.type === 'harness.step' && r.name === 'charge'), 'after')
  const { runId } = await hostA.submit({ sessionId: 'checkout', inputId: 'pay-1', prompt: 'Check out my cart' })

  const readerStore = await world.openStore()
  const settings = {
    store: readerStore,
    clock,
    redactor: undefined,
    retainMs: 300_000,
    firstChunkDeadlineMs: 5_000,
    pollMinMs: 2,
    pollMaxMs: 10,
  }
  const beforeCrash: Array<{ offset: string; chunk: StreamChunk }> = []
  const dropped = new AbortController()
  const reading = (async () => {
    for await (const entry of new RunStream(settings, runId, null).read('-1', dropped.signal)) beforeCrash.push(entry)
  })().catch(() => {})
  void hostA.drive('checkout').catch(() => {})
  while (!dying.crashed) await tick()
  // The client read what reached it, then its connection dropped.
  while (beforeCrash.length === 0) await tick()
  dropped.abort()
  await reading

  clock.advance(LEASE_MS + 1)
  const worker = createWorker({ store: await world.openStore(), harnesses: harness, clock, leaseMs: LEASE_MS, workerId: 'w' })
  await worker.poll()
  const afterReconnect: Array<{ offset: string; chunk: StreamChunk }> = []
  const last = beforeCrash.at(-1)!.offset
  for await (const entry of new RunStream(settings, runId, last).read(last)) afterReconnect.push(entry)
  const stored = await new RunStream(settings, runId, null).snapshot()
  return { beforeCrash, afterReconnect, stored, charges: charged.size, invoices: invoiced.size }
}

/** The log seq of each offset: strictly growing when a reader saw every chunk once, in order. */
export const seqsOf = (entries: ReadonlyArray<{ offset: string }>): number[] => entries.map((e) => decodeOffset(e.offset)?.seq ?? -1)

/**
 * What is wrong with a {@link streamAcrossCrash} report (empty when nothing): the client must
 * have seen the stored stream exactly, every chunk once and in order, through the crash to
 * the turn's end, with one charge and one invoice.
 */
export function oneStreamProblems(report: StreamCrashReport): string[] {
  const seen = seqsOf([...report.beforeCrash, ...report.afterReconnect])
  const stored = seqsOf(report.stored)
  const problems: string[] = []
  if (seen.join() !== stored.join()) problems.push(`the client saw seqs ${seen.join()}, the stream holds ${stored.join()}`)
  if (report.afterReconnect.length === 0) problems.push('nothing came after the reconnect: the resumed turn wrote elsewhere')
  if (report.afterReconnect.at(-1)?.chunk.type !== 'RUN_FINISHED') problems.push('the stream did not end with RUN_FINISHED')
  if (report.charges !== 1 || report.invoices !== 1)
    problems.push(`${report.charges} charges and ${report.invoices} invoices, not one each`)
  return problems
}
