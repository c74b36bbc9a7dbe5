/**
 * The entry of a racer: a child process or worker thread that opens stores with the
 * `createStore` of the store author's factory module and runs the calls the suite sends.
 * Each call carries the suite's clock time, so the racer's manual clock follows it.
 */
import { parentPort } from 'node:worker_threads'
import { createManualClock, type HarnessStore, type ManualClock } from '@tanstack/ai-harness/store'
import { type RacerReply, type RacerRequest, sendableError } from './protocol.js'

type Factory = (context: { namespace: string; clock: ManualClock }) => HarnessStore | Promise<HarnessStore>

const stores = new Map<number, { store: HarnessStore; clock: ManualClock }>()
let nextStore = 1
const factories = new Map<string, Promise<Factory>>()

function send(reply: RacerReply): void {
  if (parentPort) parentPort.postMessage(reply)
  else process.send?.(reply)
}

async function factoryOf(module: string): Promise<Factory> {
  let found = factories.get(module)
  if (!found) {
    found = import(module).then((loaded: { createStore?: unknown; default?: unknown }) => {
      const factory = loaded.createStore ?? loaded.default
      if (typeof factory !== 'function') {
        throw new Error(
          `The processes module ${module} exports no createStore function (export function createStore({ namespace, clock }) { … }).`,
        )
      }
      return factory as Factory
    })
    factories.set(module, found)
  }
  return found
}

async function handle(request: RacerRequest): Promise<unknown> {
  if (request.op === 'open') {
    const clock = createManualClock(request.now)
    const store = await (await factoryOf(request.module))({ namespace: request.namespace, clock })
    const id = nextStore++
    stores.set(id, { store, clock })
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
  const [group, name] = request.method.includes('.') ? request.method.split('.') : [undefined, request.method]
  const target = (group ? entry.store[group as 'leases' | 'wakeups' | 'sessions'] : entry.store) as unknown as Record<
    string,
    (...args: unknown[]) => unknown
  >
  if (!target || typeof target[name!] !== 'function') throw new Error(`The store has no ${request.method}.`)
  return await target[name]!(...request.args)
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
