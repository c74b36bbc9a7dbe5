/**
 * The entry of a racer: a child process or worker thread that opens stores with the
 * `createStore` of the store author's factory module and runs the calls the suite sends.
 * Each call carries the suite's clock time, so the racer's manual clock follows it.
 */
import { parentPort } from 'node:worker_threads'
import { resumeServerSentEventsResponse } from '@tanstack/ai'
import { createManualClock, type HarnessStore, type ManualClock } from '@tanstack/ai-harness/store'
import { witnessedSection } from '../streams/lock-witness.js'
import { RACER_LOCK_SETTINGS, RETAIN_MS, SSE_URL_BASE } from '../streams/racer-settings.js'
import { defaultStreamsHook, type StreamsHook } from '../streams/streams-hook.js'
import { type RacerReply, type RacerRequest, sendableError } from './protocol.js'

type Factory = (context: { namespace: string; clock: ManualClock }) => HarnessStore | Promise<HarnessStore>
type Loaded = { factory: Factory; streams: StreamsHook }

const stores = new Map<number, { store: HarnessStore; clock: ManualClock; streams: StreamsHook }>()
let nextStore = 1
const factories = new Map<string, Promise<Loaded>>()

function send(reply: RacerReply): void {
  if (parentPort) parentPort.postMessage(reply)
  else process.send?.(reply)
}

/** The module's `createStore`, and its `streams` hook (the core's streams and locks when it exports none). */
async function factoryOf(module: string): Promise<Loaded> {
  let found = factories.get(module)
  if (!found) {
    found = import(module).then((loaded: { createStore?: unknown; default?: unknown; streams?: StreamsHook }) => {
      const factory = loaded.createStore ?? loaded.default
      if (typeof factory !== 'function') {
        throw new Error(
          `The processes module ${module} exports no createStore function (export function createStore({ namespace, clock }) { … }).`,
        )
      }
      return { factory: factory as Factory, streams: loaded.streams ?? defaultStreamsHook }
    })
    factories.set(module, found)
  }
  return found
}

async function handle(request: RacerRequest): Promise<unknown> {
  if (request.op === 'open') {
    const clock = createManualClock(request.now)
    const { factory, streams } = await factoryOf(request.module)
    const store = await factory({ namespace: request.namespace, clock })
    const id = nextStore++
    stores.set(id, { store, clock, streams })
    return {
      store: id,
      limits: { ...store.limits },
      leases: store.leases !== undefined,
      wakeups: store.wakeups !== undefined,
      sessions: store.sessions !== undefined,
      now: typeof store.now === 'function',
    }
  }
  const entry = stores.get(request.store)
  if (!entry) throw new Error(`racer: no store ${request.store}`)
  if (request.op === 'close') {
    stores.delete(request.store)
    await entry.store.close?.()
    return undefined
  }
  entry.clock.set(request.now)
  if (request.op === 'sse-resume') return resumeHere(entry, request.runId, request.lastEventId)
  if (request.op === 'lock-sections') {
    const locks = entry.streams.locks({ store: entry.store, clock: entry.clock, ...RACER_LOCK_SETTINGS })
    const { key, witness, who, holdMs } = request
    await Promise.all(
      Array.from({ length: request.sections }, (_, i) =>
        locks.withLock(key, () => witnessedSection(entry.store, witness, `${who}.${i + 1}`, holdMs)),
      ),
    )
    return undefined
  }
  const [group, name] = request.method.includes('.') ? request.method.split('.') : [undefined, request.method]
  const target = (group ? entry.store[group as 'leases' | 'wakeups' | 'sessions'] : entry.store) as unknown as Record<
    string,
    (...args: unknown[]) => unknown
  >
  if (!target || typeof target[name!] !== 'function') throw new Error(`The store has no ${request.method}.`)
  return await target[name]!(...request.args)
}

/** TanStack AI's `resumeServerSentEventsResponse` run in this process, on its own store: the whole body, as text. */
async function resumeHere(entry: { store: HarnessStore; clock: ManualClock; streams: StreamsHook }, runId: string, lastEventId: string) {
  const streams = entry.streams.streams({ store: entry.store, clock: entry.clock, retainMs: RETAIN_MS })
  const request = new Request(`${SSE_URL_BASE}?runId=${encodeURIComponent(runId)}`, { headers: { 'Last-Event-ID': lastEventId } })
  return await resumeServerSentEventsResponse({ adapter: streams.durability(request) }).text()
}

function onMessage(request: RacerRequest): void {
  handle(request).then(
    (value) => send({ id: request.id, value }),
    (error: unknown) => send({ id: request.id, error: sendableError(error) }),
  )
}

if (parentPort) parentPort.on('message', onMessage)
else {
  process.on('message', onMessage)
  // The suite ends: leave with it.
  process.on('disconnect', () => process.exit(0))
}
