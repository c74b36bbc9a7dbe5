import { type AnyTextAdapter, EventType } from '@tanstack/ai'

/**
 * The id a tool call gets in the session log when the model reuses an id: the model's
 * id with `-2`, `-3`, … appended, the smallest that no call of the session has. Only
 * letters, digits, `_` and `-` are added, so every provider takes it back in history.
 */
export function repeatedCallId(modelId: string, taken: (id: string) => boolean): string {
  for (let n = 2; ; n++) {
    const id = `${modelId}-${n}`
    if (!taken(id)) return id
  }
}

/**
 * Gives every tool call of a session its own id, before `chat()` sees the call.
 *
 * Some providers and local models number their call ids per response (`call_0` in every
 * turn) or repeat one inside a batch. `chat()` and the log know a call by its id, so a
 * repeat would be answered with the earlier call's result and never run. The adapter's
 * stream is the only place to fix that once for everything downstream: the renamed id
 * is the one `chat()` runs, the log keeps, the tool's idempotency key holds and the
 * model reads back in its history, so its call and its result always match.
 */
export class CallIds {
  /** Logged id (the call's id in the session log) → the model's id, for the calls this chat loop renamed. */
  readonly #modelIds = new Map<string, string>()

  constructor(private readonly inLog: (id: string) => boolean) {}

  /** The model's own id of a call this chat loop renamed, or undefined when the logged id is the model's. */
  modelIdOf(loggedId: string): string | undefined {
    return this.#modelIds.get(loggedId)
  }

  /** The adapter, with each response's tool-call ids made unique in the session. */
  wrap(adapter: AnyTextAdapter): AnyTextAdapter {
    const wrapped = (options: unknown) => this.#rename(adapter.chatStream(options as never) as AsyncIterable<unknown>)
    // Methods run on the real adapter: class adapters keep private fields a proxy cannot reach.
    return new Proxy(adapter, {
      get(target, property) {
        if (property === 'chatStream') return wrapped
        const value = Reflect.get(target, property, target)
        return typeof value === 'function' && property !== 'constructor' ? value.bind(target) : value
      },
    })
  }

  async *#rename(stream: AsyncIterable<unknown>): AsyncIterable<unknown> {
    // Ids given in this response, and the id each model id stands for since its last start.
    const given = new Set<string>()
    const current = new Map<string, string>()
    const taken = (id: string) => given.has(id) || this.inLog(id) || this.#modelIds.has(id)
    for await (const chunk of stream) {
      const id = (chunk as { toolCallId?: unknown }).toolCallId
      if (typeof id !== 'string' || id === '') {
        yield chunk
        continue
      }
      if ((chunk as { type?: unknown }).type === EventType.TOOL_CALL_START) {
        const loggedId = taken(id) ? repeatedCallId(id, taken) : id
        given.add(loggedId)
        current.set(id, loggedId)
        if (loggedId !== id) this.#modelIds.set(loggedId, id)
      }
      const loggedId = current.get(id) ?? id
      yield loggedId === id ? chunk : { ...(chunk as object), toolCallId: loggedId }
    }
  }
}
