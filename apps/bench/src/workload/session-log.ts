import type { HarnessStore } from '@tanstack/ai-harness'
import type { LogRecord, StoreLimits } from '@tanstack/ai-harness/store'
import { SMALL_VALUE } from './values.js'

/** Steps per tool call in a generated session: a turn is 10 records. */
const STEPS_PER_TURN = 5

/**
 * The records of a finished session of exactly `count` records, shaped as the harness
 * writes them: turns of a prompt, an assistant message with a tool call, its steps,
 * the tool result, the answer and the end of the turn; app notes fill the rest.
 */
export function sessionRecords(count: number, harness = 'bench'): LogRecord[] {
  const records: LogRecord[] = [{ type: 'harness.session.opened', harness, at: 1_700_000_000_000 }]
  for (let turn = 0; records.length + 10 <= count; turn++) {
    const turnId = `turn-${turn}`
    const toolCallId = `call_${String(turn).padStart(20, '0')}`
    const at = 1_700_000_000_000 + turn * 1000
    records.push({ type: 'harness.turn.started', turnId, messages: [{ role: 'user', content: `Charge order ${turn}` }], at })
    records.push({ type: 'harness.assistant', turnId, text: '', toolCalls: [{ id: toolCallId, name: 'work', arguments: '{}' }] })
    for (let i = 0; i < STEPS_PER_TURN; i++) records.push({ type: 'harness.step', toolCallId, name: `step:${i}`, value: SMALL_VALUE })
    records.push({ type: 'harness.tool.result', toolCallId, toolName: 'work', ok: true, result: { ok: true }, cut: false })
    records.push({ type: 'harness.assistant', turnId, text: `Order ${turn} is charged.`, toolCalls: [] })
    records.push({ type: 'harness.turn.finished', turnId, at: at + 500 })
  }
  while (records.length < count) records.push({ type: 'app.note', text: `note ${records.length}` })
  return records
}

/** Writes the records with the biggest batches the store's limits allow (a tenth kept in reserve). */
export async function writeLog(store: HarnessStore, logId: string, records: readonly LogRecord[]): Promise<number> {
  const batches = batchesWithin(records, store.limits)
  let next = 1
  for (const batch of batches) next = (await store.append(logId, next, batch)).nextSeq
  return batches.length
}

function batchesWithin(records: readonly LogRecord[], limits: StoreLimits): LogRecord[][] {
  const maxBytes = limits.maxBatchBytes * 0.9
  const maxRecords = limits.maxBatchRecords ?? Number.POSITIVE_INFINITY
  const batches: LogRecord[][] = []
  let batch: LogRecord[] = []
  let bytes = 0
  for (const record of records) {
    const size = Buffer.byteLength(JSON.stringify(record))
    if (batch.length > 0 && (bytes + size > maxBytes || batch.length >= maxRecords)) {
      batches.push(batch)
      batch = []
      bytes = 0
    }
    batch.push(record)
    bytes += size
  }
  if (batch.length > 0) batches.push(batch)
  return batches
}
