import { randomUUID } from 'node:crypto'
import { chat, type ChatMiddleware, EventType, type StreamChunk } from '@tanstack/ai'
import { HarnessError, isHarnessError, type LogConflictError } from '../contract/errors.js'
import { readAll } from '../contract/read-all.js'
import { systemClock } from '../contract/clock.js'
import type { Clock, HarnessStore, Lease, LogEntry, LogRecord } from '../contract/types.js'
import { SecretScanner } from '../secrets/secret-scanner.js'
import type { Harness } from './harness.js'
import type { AssistantRecord, LoggedMessage, ToolResultRecord } from './records.js'
import { foldLog, type SessionState, unsettledCalls } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'
import { SessionWriter } from './session-writer.js'
import { isFatal, wrapTool } from './tool-call.js'

export interface HostOptions {
  store: HarnessStore
  /** The harnesses this host can run, by name. */
  harnesses: Harness | Harness[]
  /** Identifies this host in leases. Default: a random id. */
  hostId?: string
  clock?: Clock
  /** How long a lease lasts before another host may take the session over. Default 30 s. */
  leaseMs?: number
}

export interface OpenOptions {
  /** Harness name (or the harness itself); optional when the host has one harness. */
  harness?: string | Harness
  /** Default: a new random id. */
  sessionId?: string
  /** Secrets of the session, by name: never logged, never shown to the model. */
  secrets?: Record<string, string>
}

/** A prompt: text, or TanStack AI model messages. */
export type TurnInput = string | LoggedMessage | LoggedMessage[]

/** Runs durable sessions of its harnesses on one store. */
export interface Host {
  readonly hostId: string
  readonly store: HarnessStore
  open(options?: OpenOptions): Promise<Session>
}

/** An open session: one host drives it until `close()`. */
export interface Session {
  readonly id: string
  readonly harness: Harness
  /** True when the session's last turn was cut and not yet resumed. */
  readonly needsRecovery: boolean
  /** Sends a prompt and streams the TanStack AI chunks of the turn. A cut turn is resumed first. */
  send(input: TurnInput): AsyncIterable<StreamChunk>
  /** Finishes a cut turn by the replay rules; yields nothing when there is none. */
  resume(): AsyncIterable<StreamChunk>
  /** The whole log, harness and app records. */
  entries(): Promise<LogEntry[]>
  /** Releases the session for other hosts. */
  close(): Promise<void>
}

const DEFAULT_LEASE_MS = 30_000

/** Creates a host. */
export function createHost(options: HostOptions): Host {
  const harnesses = [options.harnesses].flat()
  const hostId = options.hostId ?? `host-${randomUUID()}`
  const clock = options.clock ?? systemClock
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
  const store = options.store

  const pick = (wanted: string | Harness | undefined): Harness => {
    if (typeof wanted === 'object') return wanted
    if (wanted === undefined) {
      if (harnesses.length === 1) return harnesses[0]!
      throw new HarnessError('INVALID_ARGUMENT', `This host runs ${harnesses.length} harnesses; say which: host.open({ harness: 'name' }).`)
    }
    const found = harnesses.find((h) => h.name === wanted)
    if (!found)
      throw new HarnessError(
        'INVALID_ARGUMENT',
        `This host has no harness named ${JSON.stringify(wanted)}; pass it in createHost({ harnesses }).`,
      )
    return found
  }

  return {
    hostId,
    store,
    async open(openOptions = {}) {
      const harness = pick(openOptions.harness)
      const sessionId = openOptions.sessionId ?? randomUUID()
      let lease: Lease | undefined
      if (store.leases) lease = await store.leases.acquire(sessionId, hostId, leaseMs)
      try {
        const state = foldLog(await readAll(store, sessionId))
        return await openSession({ store, harness, sessionId, state, secrets: openOptions.secrets ?? {}, clock, lease, leaseMs })
      } catch (error) {
        if (lease) await store.leases?.release(lease).catch(() => {})
        throw error
      }
    },
  }
}

interface OpenArgs {
  store: HarnessStore
  harness: Harness
  sessionId: string
  state: SessionState
  secrets: Record<string, string>
  clock: Clock
  lease: Lease | undefined
  leaseMs: number
}

async function openSession(args: OpenArgs): Promise<Session> {
  const { store, harness, sessionId, state, clock } = args
  if (state.harness !== undefined && state.harness !== harness.name) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `Session ${JSON.stringify(sessionId)} belongs to harness ${JSON.stringify(state.harness)}; open it with that harness.`,
    )
  }
  const scanner = new SecretScanner()
  for (const [name, value] of Object.entries(args.secrets)) {
    try {
      scanner.add(value)
    } catch (error) {
      throw new HarnessError('SECRET_TOO_SHORT', `Secret ${JSON.stringify(name)}: ${(error as Error).message}`)
    }
  }
  let lost: LogConflictError | undefined
  const writer = new SessionWriter(store, sessionId, state, (error) => {
    lost = error
  })
  const runtime: SessionRuntime = {
    logId: sessionId,
    harness,
    store,
    state,
    writer,
    scanner,
    clock,
    secrets: new Map(Object.entries(args.secrets)),
    maxStepBytes: Math.min(harness.options.maxStepBytes ?? 64 * 1024, store.limits.maxRecordBytes),
  }
  if (state.nextSeq === 1) await writer.append([{ type: 'harness.session.opened', harness: harness.name, at: clock.now() }])

  let lease = args.lease
  let leaseLost: HarnessError | undefined
  let busy = false
  let closed = false
  const renewTimer =
    lease && store.leases
      ? setInterval(
          () => {
            if (!lease || !store.leases) return
            store.leases.renew(lease, args.leaseMs).then(
              (renewed) => {
                lease = renewed
              },
              (error: unknown) => {
                if (isHarnessError(error, 'LEASE_LOST')) leaseLost = error
              },
            )
          },
          Math.max(1000, Math.floor(args.leaseMs / 3)),
        )
      : undefined
  renewTimer?.unref()

  const guard = () => {
    if (closed) throw new HarnessError('INVALID_ARGUMENT', 'This session is closed; open it again with host.open({ sessionId }).')
    if (lost) throw lost
    if (leaseLost) throw leaseLost
    if (busy)
      throw new HarnessError('SESSION_BUSY', 'A turn of this session is still running; wait for its stream to end before sending again.')
  }

  async function* runTurn(turnId: string): AsyncGenerator<StreamChunk> {
    yield* runChat(runtime, turnId, () => lost ?? leaseLost)
  }

  async function* recover(): AsyncGenerator<StreamChunk> {
    const open = state.openTurn
    if (!open) return
    const settle: ToolResultRecord[] = []
    for (const call of unsettledCalls(state)) {
      if (harness.replayOf(call.name) === 'safe' && harness.toolNamed(call.name)) continue
      settle.push({
        type: 'harness.tool.result',
        toolCallId: call.id,
        toolName: call.name,
        ok: false,
        result: { error: harness.cutToolError },
        cut: true,
      })
    }
    if (settle.length > 0) await writer.append(settle)
    yield* runTurn(open.turnId)
  }

  const exclusive = (body: () => AsyncGenerator<StreamChunk>): AsyncIterable<StreamChunk> => ({
    async *[Symbol.asyncIterator]() {
      guard()
      busy = true
      try {
        yield* body()
      } finally {
        busy = false
      }
    },
  })

  return {
    id: sessionId,
    harness,
    get needsRecovery() {
      return state.openTurn !== undefined
    },
    send(input) {
      return exclusive(async function* () {
        yield* recover()
        const turnId = randomUUID()
        const messages = toMessages(input)
        for (const [i, m] of messages.entries()) {
          const secret = scanner.find(m)
          if (secret)
            throw new HarnessError(
              'RECORD_SECRET',
              `Prompt message ${i} holds a secret of the session at ${secret.path}; send it without the secret.`,
            )
        }
        await writer.append([{ type: 'harness.turn.started', turnId, messages, at: clock.now() }])
        yield* runTurn(turnId)
      })
    },
    resume() {
      return exclusive(recover)
    },
    entries: () => readAll(store, sessionId),
    async close() {
      if (closed) return
      closed = true
      if (renewTimer) clearInterval(renewTimer)
      if (lease && store.leases) await store.leases.release(lease).catch(() => {})
    },
  }
}

function toMessages(input: TurnInput): LoggedMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }]
  const list = Array.isArray(input) ? input : [input]
  return list.map((m) => ({ ...m }))
}

/**
 * One `chat()` run of a turn: logs each assistant message with tool calls before the
 * tools run, settles every tool call in the log, logs the final answer and the end of
 * the turn, and streams the chunks with the session's secrets removed.
 */
async function* runChat(session: SessionRuntime, turnId: string, stopped: () => Error | undefined): AsyncGenerator<StreamChunk> {
  const { harness, state, writer, scanner } = session
  const abortController = new AbortController()
  let fatal: unknown
  const onFatal = (error: unknown) => {
    fatal ??= error
    abortController.abort()
  }
  let text = ''
  const recorder: ChatMiddleware = {
    name: 'ai-harness-recorder',
    async onInterruptBoundary(ctx) {
      if (ctx.phase !== 'beforeTools') return undefined
      const last = [...ctx.messages].reverse().find((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0)
      if (!last?.toolCalls || last.toolCalls.every((c) => state.toolCalls.has(c.id))) return undefined
      const record: AssistantRecord = {
        type: 'harness.assistant',
        turnId,
        text: scanner.redactText(typeof last.content === 'string' ? last.content : ''),
        toolCalls: last.toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
      }
      try {
        await writer.append([record])
      } catch (error) {
        onFatal(error)
        throw error
      }
      text = ''
      return undefined
    },
  }
  const tools = harness.tools.map((tool) => wrapTool(session, tool, onFatal))
  const stream = chat({
    adapter: harness.options.adapter,
    messages: state.messages.map((m) => ({ ...m })) as never,
    tools: tools as never,
    systemPrompts: harness.options.systemPrompts,
    middleware: [...(harness.options.middleware ?? []), recorder] as never,
    abortController,
    modelOptions: harness.options.modelOptions as never,
    agentLoopStrategy: harness.options.agentLoopStrategy as never,
    threadId: session.logId,
  }) as AsyncIterable<StreamChunk>
  let failed = false
  try {
    for await (const chunk of stream) {
      if (fatal) break
      if (chunk.type === EventType.TEXT_MESSAGE_CONTENT) text += (chunk as { delta?: string }).delta ?? ''
      if (chunk.type === EventType.RUN_ERROR) failed = true
      yield scanner.redact(chunk)
    }
  } catch (error) {
    throw fatal ?? error
  }
  const stop = fatal ?? stopped()
  if (stop) throw stop
  if (failed) return
  const end: LogRecord[] = []
  if (text !== '') end.push({ type: 'harness.assistant', turnId, text: scanner.redactText(text), toolCalls: [] })
  end.push({ type: 'harness.turn.finished', turnId, at: session.clock.now() })
  await writer.append(end)
}

export { isFatal }
