import { ORPHAN_REASON } from '../../runtime/cancel-turn.js'
import type { StreamChunk } from '@tanstack/ai'
import type { LogEntry, LogRecord } from '../../contract/types.js'
import type { SimClients, SimSessionState } from './sim-clients.js'
import type { Invocation, SimLedger } from './sim-ledger.js'
import { OUTCOME_STEP, SIM_SECRET } from './sim-workloads.js'

/** Records of a tool call that belong inside it: after the assistant record that made the call, before its result. */
const CALL_RECORDS = new Set([
  'harness.step',
  'harness.step.failed',
  'harness.step.started',
  'harness.step.intent',
  'harness.rollback',
  'harness.sleep',
  'harness.ask',
])

/** Invocations grouped by key, in start order. */
function byKey(invocations: readonly Invocation[]): Map<string, Invocation[]> {
  const keys = new Map<string, Invocation[]>()
  for (const invocation of invocations) keys.set(invocation.key, [...(keys.get(invocation.key) ?? []), invocation])
  return keys
}

/** At most one fn invocation in flight per step key at any virtual instant, across all processes; attempts within the budget. */
export function checkInvocations(ledger: SimLedger, faultFree: boolean): string[] {
  const found: string[] = []
  for (const [key, runs] of byKey(ledger.invocations)) {
    for (let i = 1; i < runs.length; i++) {
      const before = runs[i - 1]!
      const run = runs[i]!
      if (before.end === undefined || run.start < before.end) {
        found.push(
          `step ${key}: attempt ${run.attempt} on ${run.process} started at ${run.start} while attempt ${before.attempt} on ${before.process} ran (${before.start}..${before.end ?? 'never ended'})`,
        )
      }
    }
    const budget = runs[0]!.budget
    if (budget > 1) {
      if (runs.length > budget)
        found.push(
          `step ${key}: fn ran ${runs.length} times, over its budget of ${budget} attempts (${runs.map((r) => r.attempt).join(', ')})`,
        )
      const attempts = runs.map((r) => r.attempt)
      if (new Set(attempts).size !== attempts.length || attempts.some((a) => a > budget)) {
        found.push(`step ${key}: attempts ${attempts.join(', ')} repeat or pass the budget of ${budget}`)
      }
    }
    const effects = runs.filter((r) => r.outcome === 'ok').length
    if (faultFree && effects > 1) found.push(`step ${key}: its effect happened ${effects} times in a world without faults`)
  }
  // A step never runs after its value was logged.
  const loggedAt = new Map<string, number>()
  for (const append of ledger.appends) {
    for (const r of append.records) {
      const key = `${append.incarnation}/${append.logId}:${String(r.toolCallId)}:${String(r.name)}`
      if (r.type === 'harness.step' && !loggedAt.has(key)) loggedAt.set(key, append.at)
    }
  }
  for (const run of ledger.invocations) {
    const at = loggedAt.get(run.key)
    if (at !== undefined && run.start > at)
      found.push(`step ${run.key}: attempt ${run.attempt} on ${run.process} started at ${run.start}, after its value was logged at ${at}`)
  }
  return found
}

/**
 * The steps that cannot be made idempotent, with or without faults: a verified step's
 * effect happens at most once (verify looks before fn runs again), a once step's fn runs at
 * most once, and a compensation (`undo(…)`) runs at most once.
 */
export function checkOutcomeSteps(ledger: SimLedger): string[] {
  const found: string[] = []
  for (const [key, runs] of byKey(ledger.invocations)) {
    const effects = runs.filter((r) => r.outcome === 'ok').length
    if (key.endsWith(`:${OUTCOME_STEP.verified}`) && effects > 1) found.push(`verified step ${key}: its effect happened ${effects} times`)
    if (key.endsWith(`:${OUTCOME_STEP.once}`) && runs.length > 1) found.push(`once step ${key}: fn ran ${runs.length} times`)
    if (key.includes(':undo(') && runs.length > 1) found.push(`compensation ${key}: ran ${runs.length} times`)
  }
  return found
}

/**
 * A parent's cancel is in the parent's log before anything is undone in its children: when a
 * child agent's log begins a rollback for its parent's cancel (`ORPHAN_REASON`), the parent's
 * log, as appended so far, holds a cancel of that turn (a rollback record naming it), or its
 * turn or the call already ended. Else a crash in the child's rollback lets the parent's turn run on.
 */
export function checkChildCancels(ledger: SimLedger): string[] {
  const found: string[] = []
  const parents = new Map<string, { open: boolean; marked: boolean; settled: Set<string> }>()
  for (const { logId, records } of ledger.appends) {
    const own = parents.get(logId) ?? { open: false, marked: false, settled: new Set<string>() }
    parents.set(logId, own)
    for (const r of records) {
      if (r.type === 'harness.turn.started') Object.assign(own, { open: true, marked: false })
      if (r.type === 'harness.turn.finished' || r.type === 'harness.turn.cancelled') own.open = false
      if (r.type === 'harness.tool.result') own.settled.add(String(r.toolCallId))
      const cancel = r.type === 'harness.rollback' ? (r.cancel as { reason?: unknown } | null) : null
      if (cancel) own.marked = true
      const at = logId.lastIndexOf('/agent/')
      if (cancel?.reason !== ORPHAN_REASON || at < 0) continue
      const parent = parents.get(logId.slice(0, at))
      if (parent?.open && !parent.marked && !parent.settled.has(logId.slice(at + '/agent/'.length)))
        found.push(`${logId}: it began rolling back for its parent's cancel before the parent's log held the cancel`)
    }
  }
  return found
}

/** A log is well-formed: dense seqs from 1, one result per call, each step once and inside its call, turns one at a time, a cancel that began rolling back ends its turn. */
export function checkLog(logId: string, entries: readonly LogEntry[], landed: readonly LogRecord[]): string[] {
  const found: string[] = []
  entries.forEach((e, i) => {
    if (e.seq !== i + 1) found.push(`${logId}: entry ${i} has seq ${e.seq}, not ${i + 1}`)
  })
  if (JSON.stringify(entries.map((e) => e.record)) !== JSON.stringify(landed)) {
    found.push(`${logId}: the store reads ${entries.length} records, but ${landed.length} appends landed in this order`)
  }
  const announced = new Set<string>()
  const settled = new Set<string>()
  const steps = new Set<string>()
  let open = false
  // A cancel whose rollback is logged ends its turn cancelled: the turn calls the model no more (a crash in between too).
  let cancelling = false
  for (const { seq, record: r } of entries) {
    const call = String(r.toolCallId)
    if (r.type === 'harness.assistant') for (const c of (r.toolCalls as Array<{ id: string }>) ?? []) announced.add(c.id)
    if (r.type === 'harness.turn.started') {
      if (open) found.push(`${logId}@${seq}: a turn began while another was open`)
      open = true
      cancelling = false
    }
    if (r.type === 'harness.rollback' && r.cancel) cancelling = true
    if (cancelling && r.type === 'harness.assistant')
      found.push(`${logId}@${seq}: the model was called after a cancel of the turn began rolling back`)
    if (cancelling && r.type === 'harness.turn.finished')
      found.push(`${logId}@${seq}: a turn whose cancel began rolling back finished, not cancelled`)
    if (r.type === 'harness.turn.finished' || r.type === 'harness.turn.cancelled') open = false
    if (CALL_RECORDS.has(r.type) && (!announced.has(call) || settled.has(call))) {
      found.push(`${logId}@${seq}: ${r.type} of call ${call} is outside its call`)
    }
    if (r.type === 'harness.step') {
      const step = `${call}:${String(r.name)}`
      if (steps.has(step)) found.push(`${logId}@${seq}: step ${step} logged twice`)
      steps.add(step)
    }
    if (r.type === 'harness.tool.result') {
      if (settled.has(call)) found.push(`${logId}@${seq}: a second result of call ${call}`)
      settled.add(call)
    }
  }
  return found
}

/** Forms of the world's secret that no byte may hold. */
const SECRET_FORMS = [SIM_SECRET, Buffer.from(SIM_SECRET).toString('base64'), Buffer.from(SIM_SECRET).toString('hex')]

/** No secret in any byte of a log or of what a client's stream gave; nobody stuck; deleted sessions stay deleted. */
export function checkWorld(ledger: SimLedger, clients: SimClients): string[] {
  const found: string[] = []
  const bytes = JSON.stringify(ledger.appends.map((a) => a.records)) + JSON.stringify(clients.sessions.map((s) => s.chunks))
  for (const form of SECRET_FORMS)
    if (bytes.includes(form)) found.push(`a secret of the session is in a log or a stream (${form.slice(0, 6)}…)`)
  for (const s of clients.sessions) {
    if (s.deleted && ledger.records(s.plan.id).length > 0)
      found.push(
        `${s.plan.id}: deleted, and its log came back (${ledger
          .records(s.plan.id)
          .map((r) => r.type)
          .join(', ')})`,
      )
  }
  return [...found, ...ledger.notes]
}

/** Sessions whose turn is still open (or whose turn never began) once the world stopped. */
export function unsettled(ledger: SimLedger, clients: SimClients): string[] {
  const open: string[] = []
  // A delete the client asked for must have gone through too (it is tried again until it does).
  for (const s of clients.sessions) if (s.deleteRequested ? !s.deleted : !ledger.settled(s.plan.id)) open.push(s.plan.id)
  const logIds = new Set(ledger.appends.map((a) => a.logId))
  for (const logId of logIds) {
    const records = ledger.records(logId)
    const root = clients.sessions.find((s) => s.plan.id === logId.split('/')[0])
    // A deleted session's children stay as they were (a delete removes one log); the session's own log is checked above.
    if (!root || root.deleteRequested || root.plan.id === logId) continue
    if (records.some((r) => r.type === 'harness.turn.started') && !ledger.settled(logId)) open.push(logId)
  }
  return open
}

/** A stream entry as a reader gets it. */
type StreamEntry = { readonly offset: string; readonly chunk: StreamChunk }

/**
 * The stream a client saw matches what is stored: the reader of a submitted prompt's durable
 * stream got the stored chunks exactly, each once and in order, across its reconnects (all
 * of them when it read to the end); and every tool result a client's stream gave (durable or
 * `session.send`) is one the session's log holds. (A tool call a model began may be in a
 * stream and not in the log: a host died before it logged the model's answer, and the turn
 * went on with a new model call, in the same stream.)
 */
export function checkStreams(ledger: SimLedger, s: SimSessionState, stored: readonly StreamEntry[] | undefined): string[] {
  const found: string[] = []
  const id = s.plan.id
  if (stored) {
    const at = s.read.findIndex((e, i) => e.offset !== stored[i]?.offset || JSON.stringify(e.chunk) !== JSON.stringify(stored[i]?.chunk))
    if (at >= 0)
      found.push(
        `${id}: its reader's entry ${at} is ${s.read[at]!.offset} ${s.read[at]!.chunk.type}, the stream holds ${stored[at]?.offset ?? 'nothing'} ${stored[at]?.chunk.type ?? ''} there`,
      )
    else if (s.readToEnd && s.read.length !== stored.length)
      found.push(`${id}: its reader read to the end after ${s.read.length} entries, the stream holds ${stored.length}`)
  }
  if (s.deleteRequested) return found
  const results = new Set<string>()
  for (const r of ledger.records(id)) if (r.type === 'harness.tool.result') results.add(String(r.toolCallId))
  for (const chunk of [...s.chunks, ...s.read.map((e) => e.chunk)]) {
    const call = (chunk as { toolCallId?: unknown }).toolCallId
    if (chunk.type === 'TOOL_CALL_RESULT' && !results.has(String(call)))
      found.push(`${id}: a client's stream gave the result of tool call ${String(call)}, which its log does not hold`)
  }
  return found
}
