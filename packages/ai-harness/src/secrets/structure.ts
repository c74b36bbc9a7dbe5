import { EventType } from '@tanstack/ai'
import { HARNESS_EVENTS } from '../runtime/event-names.js'
import { HARNESS_RECORD_TYPES } from '../runtime/record-types.js'
import { type KeepStructure, SECRET_MARKER } from './secret-scanner.js'

/**
 * What is structure and what is content, for redaction. Content (text, values,
 * arguments, results, messages) has secrets cut out. Structure (ids, names, roles,
 * event types, field names) is never cut: a client needs it to follow the stream and
 * answer a question. A secret that occurs in structure known when a session opens is
 * refused then (see `assertSecretsApart`).
 */

/** Fields of an AG-UI event (at its top level and in `metadata.tanstack`) that hold structure. */
const EVENT_STRUCTURE_KEYS = new Set([
  'type',
  'name',
  'messageId',
  'parentMessageId',
  'toolCallId',
  'toolCallName',
  'toolName',
  'runId',
  'parentRunId',
  'threadId',
  'role',
  'timestamp',
  'model',
  'index',
  'finishReason',
  'stepName',
  'code',
  'subtype',
  'entityId',
  'state',
])

/** Fields of the harness's own custom events (`harness.question`, `harness.parked`) that hold structure. */
const HARNESS_EVENT_VALUE_KEYS = new Set(['sessionId', 'questionId', 'toolCallId', 'name', 'reason', 'until', 'approvalId', 'toolName'])

const HARNESS_EVENT_SET = new Set<string>(Object.values(HARNESS_EVENTS))

const METADATA: KeepStructure = { nested: { tanstack: { keys: EVENT_STRUCTURE_KEYS } } }

/** An interrupt outcome of `RUN_FINISHED`: its ids, reasons and kinds are structure; a call's `input` is content. */
const INTERRUPT_OUTCOME: KeepStructure = {
  keys: new Set(['type']),
  nested: {
    interrupts: {
      items: { keys: new Set(['id', 'reason', 'toolCallId']), nested: { metadata: { keys: new Set(['kind', 'toolName']) } } },
    },
  },
}

/** The structure of one stream event. */
export function eventStructure(event: { type?: unknown; name?: unknown }): KeepStructure {
  const nested: Record<string, KeepStructure> = { metadata: METADATA }
  if (event.type === EventType.CUSTOM && typeof event.name === 'string' && HARNESS_EVENT_SET.has(event.name)) {
    nested.value = { keys: HARNESS_EVENT_VALUE_KEYS }
  }
  if (event.type === EventType.RUN_FINISHED) nested.outcome = INTERRUPT_OUTCOME
  return { keys: EVENT_STRUCTURE_KEYS, nested }
}

/** The structure of a model message: role, ids, the function name of a tool call. */
export const MESSAGE_STRUCTURE: KeepStructure = {
  keys: new Set(['role', 'toolCallId', 'name', 'id', 'type']),
  nested: {
    toolCalls: {
      items: { keys: new Set(['id', 'type']), nested: { function: { keys: new Set(['name']) } } },
    },
  },
}

/** The structure of a logged tool call: its id and tool name; its arguments are content. */
export const LOGGED_CALL_STRUCTURE: KeepStructure = { keys: new Set(['id', 'name']) }

/**
 * Words the harness itself writes into every log and stream: record types and field
 * names, AG-UI event types and fields, roles, its custom event names, JSON Schema
 * keywords of questions, and the marker. A secret that occurs in one of them would be
 * in every log, so it is refused when the session opens.
 */
export const FIXED_STRUCTURE: readonly string[] = [
  // Record types (every one of `HarnessRecord`) and their fields.
  ...HARNESS_RECORD_TYPES,
  'approved',
  'type',
  'harness',
  'parent',
  'sessionId',
  'turnId',
  'at',
  'id',
  'messages',
  'host',
  'fence',
  'text',
  'toolCalls',
  'toolCallId',
  'toolName',
  'arguments',
  'value',
  'wakeAt',
  'message',
  'schema',
  'answer',
  'reason',
  'until',
  'notStarted',
  // A failed attempt of a step, and the trace context of a turn.
  'attempt',
  'timedOut',
  'final',
  'retryAt',
  'trace',
  'traceId',
  'spanId',
  'flags',
  // Fields of a logged tool call: its replay policy and the model's own id when the harness renamed a repeat.
  'replay',
  'modelId',
  'safe',
  'never',
  'rejected',
  'result',
  'error',
  'cut',
  'ok',
  // Roles and message fields.
  'user',
  'assistant',
  'tool',
  'system',
  'developer',
  'reasoning',
  'role',
  'content',
  'function',
  // AG-UI events: types and fields.
  ...Object.values(EventType),
  ...EVENT_STRUCTURE_KEYS,
  'delta',
  'metadata',
  'tanstack',
  'input',
  'usage',
  'outcome',
  'rawEvent',
  'tool_calls',
  'content_filter',
  'length',
  'stop',
  'output-error',
  'output-available',
  'input-complete',
  // The harness's custom events and their fields.
  ...Object.values(HARNESS_EVENTS),
  ...HARNESS_EVENT_VALUE_KEYS,
  'sleep',
  'ask',
  'agent',
  'approval',
  'interrupt',
  'interrupts',
  'kind',
  'tool_call',
  // JSON Schema keywords a question's schema holds.
  'properties',
  'required',
  'additionalProperties',
  'description',
  'items',
  'enum',
  'const',
  'object',
  'string',
  'number',
  'integer',
  'boolean',
  'array',
  'null',
  'anyOf',
  'oneOf',
  'allOf',
  'format',
  'pattern',
  'default',
  SECRET_MARKER,
]
