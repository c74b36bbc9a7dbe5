import type { LogEntry } from '@tanstack/ai-harness/store'

/** A mark between two records, e.g. where a process was killed. */
export interface TimelineMark {
  /** The mark goes after the record with this seq. */
  afterSeq: number
  text: string
}

/** One readable line per record of a session log, with optional marks between them. */
export function formatTimeline(entries: readonly LogEntry[], marks: readonly TimelineMark[] = []): string[] {
  const lines: string[] = []
  const width = String(entries.at(-1)?.seq ?? 1).length
  for (const { seq, record } of entries) {
    const r = record as Record<string, unknown>
    const type = String(r.type)
    const label = type.startsWith('harness.') ? type.slice('harness.'.length) : type
    lines.push(`  ${String(seq).padStart(width)}  ${label.padEnd(15)} ${describe(r)}`.trimEnd())
    for (const mark of marks) if (mark.afterSeq === seq) lines.push(`  ${' '.repeat(width)}  ---- ${mark.text} ----`)
  }
  return lines
}

/** The detail of one record, in words. */
function describe(r: Record<string, unknown>): string {
  const call = (id: unknown) => (typeof id === 'string' ? ` [${shortId(id)}]` : '')
  switch (r.type) {
    case 'harness.session.opened':
      return `harness ${JSON.stringify(r.harness)}`
    case 'harness.turn.started': {
      const messages = Array.isArray(r.messages) ? (r.messages as Array<{ role?: string; content?: unknown }>) : []
      const said = messages.map((m) => `${m.role ?? '?'}: ${clip(typeof m.content === 'string' ? m.content : JSON.stringify(m.content))}`)
      return `${said.join(' | ')}${driver(r)}`
    }
    case 'harness.turn.resumed':
      return `the open turn is taken over${driver(r)}`
    case 'harness.assistant': {
      const calls = Array.isArray(r.toolCalls) ? (r.toolCalls as Array<{ id: string; name: string; arguments: string }>) : []
      const said = typeof r.text === 'string' && r.text !== '' ? `says ${clip(JSON.stringify(r.text))}` : ''
      const asks = calls.map((c) => `calls ${c.name} ${clip(c.arguments, 80)}${call(c.id)}`).join('; ')
      return [said, asks].filter(Boolean).join('; ') || '(empty)'
    }
    case 'harness.step':
      return `${String(r.name)} ${'value' in r ? `= ${clip(JSON.stringify(r.value), 80)}` : 'done (no value)'}${call(r.toolCallId)}`
    case 'harness.tool.result': {
      const how = r.cut ? 'cut by the crash, settled as an error:' : r.ok ? 'ok' : 'error'
      return `${String(r.toolName)} ${how} ${clip(JSON.stringify(r.result), 100)}${call(r.toolCallId)}`
    }
    case 'harness.step.failed':
      return `${String(r.name)} attempt ${String(r.attempt)} failed${r.final ? ' (final)' : ''}: ${clip(String(r.error), 80)}${call(r.toolCallId)}`
    case 'harness.step.intent':
      return `${String(r.name)} attempt ${String(r.attempt)} begins (logged before its side effect)${call(r.toolCallId)}`
    case 'harness.rollback':
      return `the call failed (${clip(String(r.error), 60)}): its steps' undo run, newest first${call(r.toolCallId)}`
    case 'harness.sleep':
      return `${String(r.name)} until ${typeof r.wakeAt === 'number' ? new Date(r.wakeAt).toISOString() : '?'}${call(r.toolCallId)}`
    case 'harness.ask':
      return `${String(r.name)}: ${clip(JSON.stringify(r.message), 90)}${call(r.toolCallId)}`
    case 'harness.answer':
      return `${String(r.name)} = ${clip(JSON.stringify(r.answer), 80)}${call(r.toolCallId)}`
    case 'harness.parked':
      return `waits for ${r.reason === 'ask' ? 'a person' : String(r.reason)}${typeof r.until === 'number' ? ` until ${new Date(r.until).toISOString()}` : ''}${call(r.toolCallId)}`
    case 'harness.turn.finished':
      return ''
    case 'harness.turn.cancelled':
      return `reason ${JSON.stringify(r.reason)}`
    default: {
      // App records and record types of newer runtimes: show them whole, but short.
      const { type: _type, ...rest } = r
      return clip(JSON.stringify(rest), 120)
    }
  }
}

/** Who drives the turn from here, when the runtime logs it (host id and lease fence). */
function driver(r: Record<string, unknown>): string {
  if (typeof r.host !== 'string') return ''
  return ` (host ${r.host}${typeof r.fence === 'number' ? `, lease fence ${r.fence}` : ''})`
}

const shortId = (id: string) => (id.length > 14 ? `${id.slice(0, 13)}…` : id)
const clip = (text: string, max = 100) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)
