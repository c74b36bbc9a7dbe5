import assert from 'node:assert/strict'
import { type StreamChunk, toolDefinition } from '@tanstack/ai'
import type { Harness, HarnessStore } from '@tanstack/ai-harness'
import type { LogEntry } from '@tanstack/ai-harness/store'
import {
  drain,
  type Machine,
  recordsOf,
  runUntilCrash as runStreamUntilCrash,
  type Script,
  scriptedText,
  startMachine,
} from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import type { CaseContext } from '../case.js'

/**
 * A payment service that refuses a repeated idempotency key, as real payment APIs do:
 * the second call returns the first charge and makes no new one. It counts attempts,
 * so a test can tell "ran twice" from "charged twice".
 */
export class FakeBilling {
  readonly charges = new Map<string, { id: string; orderId: string }>()
  readonly invoices = new Map<string, string>()
  attempts = 0
  refused = 0

  charge(orderId: string, idempotencyKey: string): { id: string } {
    this.attempts++
    const existing = this.charges.get(idempotencyKey)
    if (existing) {
      this.refused++
      return { id: existing.id }
    }
    const charge = { id: `ch_${this.charges.size + 1}`, orderId }
    this.charges.set(idempotencyKey, charge)
    return { id: charge.id }
  }

  sendInvoice(chargeId: string, idempotencyKey: string): void {
    this.attempts++
    if (this.invoices.has(idempotencyKey)) {
      this.refused++
      return
    }
    this.invoices.set(idempotencyKey, chargeId)
  }
}

/** A machine of a case: a fresh store instance on the case's namespace, and a host named `hostId`. */
export async function startCaseMachine(context: CaseContext, harness: Harness, hostId: string): Promise<Machine> {
  return startMachine(await context.openStore(), { harnesses: harness, clock: context.clock, hostId })
}

export { drain }

/** Runs a stream until its machine crashes; fails if it ends or throws first. */
export const runUntilCrash = (machine: Machine, stream: AsyncIterable<StreamChunk>, what: string) =>
  runStreamUntilCrash(machine.store, stream, { what })

/** A scripted model that calls `checkout` for the order in the prompt, then answers. */
export function checkoutModel(): ReturnType<typeof scriptedText> {
  const script: Script = ({ messages }) => {
    const last = messages[messages.length - 1]
    if (last?.role === 'user') {
      const orderId = String(last.content).replace(/^checkout /, '')
      return { text: 'Placing the order.', toolCalls: [{ name: 'checkout', args: { orderId } }] }
    }
    return 'Your order is placed.'
  }
  return scriptedText(script)
}

export const checkoutDefinition = () =>
  toolDefinition({
    name: 'checkout',
    description: 'Charge an order and send the invoice',
    inputSchema: z.object({ orderId: z.string() }),
  })

/** The log is well-formed: dense seqs, one opened record first, every tool call settled once. */
export function assertWellFormed(entries: readonly LogEntry[]): void {
  for (const [i, entry] of entries.entries()) assert.equal(entry.seq, i + 1, 'dense seqs')
  assert.equal(entries[0]?.record.type, 'harness.session.opened')
  const calls = recordsOf(entries, 'harness.assistant').flatMap((r) => (r.toolCalls as Array<{ id: string }>).map((c) => c.id))
  const results = recordsOf(entries, 'harness.tool.result').map((r) => String(r.toolCallId))
  assert.equal(new Set(results).size, results.length, 'a tool call has one result')
  for (const id of results) assert.ok(calls.includes(id), `result for an unknown call ${id}`)
  assertOneDriverAtATime(entries)
}

/**
 * No two hosts drove the session at once: each stretch of the log starts with a
 * turn.started or turn.resumed naming its host and lease fence, and a new host always
 * comes with a greater fence than every host before it.
 */
export function assertOneDriverAtATime(entries: readonly LogEntry[]): void {
  let last: { host: string; fence: number } | undefined
  for (const { record } of entries) {
    if (record.type !== 'harness.turn.started' && record.type !== 'harness.turn.resumed') continue
    if (typeof record.fence !== 'number') continue
    const driver = { host: String(record.host), fence: record.fence }
    if (last) {
      if (driver.host === last.host) assert.ok(driver.fence >= last.fence, `host ${driver.host} went back to fence ${driver.fence}`)
      else assert.ok(driver.fence > last.fence, `host ${driver.host} drove with fence ${driver.fence} after ${last.host} had ${last.fence}`)
    }
    last = driver
  }
}

export type { HarnessStore }
