import { EventType, type StreamChunk } from '@tanstack/ai'
import { insideJsonString, type SecretScanner } from './secret-scanner.js'
import { eventStructure } from './structure.js'

/** Events that carry a piece of a longer text in `delta`, and the field naming their text. */
const DELTA_EVENTS: Readonly<Record<string, { id: 'messageId' | 'toolCallId'; json: boolean }>> = {
  [EventType.TEXT_MESSAGE_CONTENT]: { id: 'messageId', json: false },
  [EventType.TEXT_MESSAGE_CHUNK]: { id: 'messageId', json: false },
  [EventType.TOOL_CALL_ARGS]: { id: 'toolCallId', json: true },
  [EventType.TOOL_CALL_CHUNK]: { id: 'toolCallId', json: true },
  [EventType.REASONING_MESSAGE_CONTENT]: { id: 'messageId', json: false },
  [EventType.REASONING_MESSAGE_CHUNK]: { id: 'messageId', json: false },
  [EventType.THINKING_TEXT_MESSAGE_CONTENT]: { id: 'messageId', json: false },
}

/** Events that end a text: what is held back of it is given out before them. */
const END_EVENTS: Readonly<Record<string, 'messageId' | 'toolCallId'>> = {
  [EventType.TEXT_MESSAGE_END]: 'messageId',
  [EventType.TOOL_CALL_END]: 'toolCallId',
  [EventType.REASONING_MESSAGE_END]: 'messageId',
  [EventType.THINKING_TEXT_MESSAGE_END]: 'messageId',
}

/** Events after which no text of the run goes on. */
const RUN_END_EVENTS = new Set<string>([EventType.RUN_FINISHED, EventType.RUN_ERROR])

/** Characters before the given-out point kept as context, so an escape is never read half. */
const CONTEXT = 64
/** Text is looked at again once this many new characters wait: a model's token is a few characters. */
const BATCH = 24

interface Channel {
  /** The text since `base`; everything before `given` (relative to the whole text) is out. */
  text: string
  base: number
  given: number
  /** The length of the whole text when it was last looked at. */
  looked: number
  /** For JSON text (tool-call arguments): whether `given` sits inside a string literal. */
  json: { inString: boolean } | undefined
  /** The last delta event, used as the shape of the events that carry held-back text. */
  template: Record<string, unknown>
}

type Chunk = StreamChunk & Record<string, unknown>

/**
 * Removes a session's secrets from the events of a stream, and only from their
 * content: ids, names, roles and event types pass as they are.
 *
 * A model streams a text in pieces, and a secret can be cut across two of them. So the
 * pieces of each text (a message, a tool call's arguments, reasoning) are held back from
 * the first character that could begin a secret, in any form, until more text shows it
 * does not, or the text ends; what is given out has its secrets cut. Without secrets
 * every event passes untouched.
 */
export class StreamRedactor {
  readonly #channels = new Map<string, Channel>()

  constructor(private readonly scanner: SecretScanner) {}

  /** The events to pass on for `chunk`: none (held back), it redacted, or held-back text before it. */
  push(chunk: StreamChunk): StreamChunk[] {
    if (this.scanner.size === 0 && this.#channels.size === 0) return [chunk]
    const event = chunk as Chunk
    const delta = DELTA_EVENTS[event.type]
    if (delta && typeof event.delta === 'string') return this.#pushDelta(event, delta)
    const out: StreamChunk[] = []
    const ends = END_EVENTS[event.type]
    if (ends) out.push(...this.#flush(`${ends}:${String(event[ends])}`))
    if (RUN_END_EVENTS.has(event.type)) out.push(...this.flush())
    out.push(this.redactEvent(chunk))
    return out
  }

  /** Gives out every text still held back; call when the stream ends. */
  flush(): StreamChunk[] {
    return [...this.#channels.keys()].flatMap((key) => this.#flush(key))
  }

  /** One whole event with its content redacted and its structure kept. */
  redactEvent<T extends StreamChunk>(chunk: T): T {
    if (this.scanner.size === 0) return chunk
    return this.scanner.redact(chunk, eventStructure(chunk as { type?: unknown; name?: unknown }))
  }

  #pushDelta(event: Chunk, kind: { id: 'messageId' | 'toolCallId'; json: boolean }): StreamChunk[] {
    const key = `${kind.id}:${String(event[kind.id])}`
    let channel = this.#channels.get(key)
    if (!channel) {
      channel = { text: '', base: 0, given: 0, looked: 0, json: kind.json ? { inString: false } : undefined, template: event }
      this.#channels.set(key, channel)
    }
    channel.text += event.delta as string
    channel.template = event
    const length = channel.base + channel.text.length
    if (length - channel.looked < BATCH) return []
    channel.looked = length
    const settled = channel.base + this.scanner.settledLength(channel.text)
    return this.#give(channel, settled)
  }

  #flush(key: string): StreamChunk[] {
    const channel = this.#channels.get(key)
    if (!channel) return []
    this.#channels.delete(key)
    return this.#give(channel, channel.base + channel.text.length)
  }

  /** Gives out the channel's text up to `upTo` (relative to the whole text) as one delta event. */
  #give(channel: Channel, upTo: number): StreamChunk[] {
    if (upTo <= channel.given) return []
    const from = channel.given - channel.base
    const to = upTo - channel.base
    const piece = this.scanner.redactSettled(channel.text, from, to, channel.json)
    if (channel.json) channel.json.inString = insideJsonString(channel.text, to, from, channel.json.inString)
    channel.given = upTo
    // Keep a little context before the given-out point; the rest is out for good.
    const drop = Math.max(0, to - CONTEXT)
    channel.text = channel.text.slice(drop)
    channel.base += drop
    if (piece === '') return []
    const out = this.redactEvent({ ...channel.template, delta: '' } as unknown as StreamChunk) as Chunk
    return [{ ...out, delta: piece } as StreamChunk]
  }
}
