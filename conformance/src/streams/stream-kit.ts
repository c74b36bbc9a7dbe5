import assert from 'node:assert/strict'
import type { StreamChunk } from '@tanstack/ai'
import type { CaseContext } from '../case.js'
import { textChunk, defaultStreamsHook, type LocksUnderTest, type StreamsHook, type StreamsUnderTest } from './streams-hook.js'
import { RACER_LOCK_SETTINGS, RETAIN_MS } from './racer-settings.js'

export { RETAIN_MS } from './racer-settings.js'
/** How long a case waits for something that must happen soon, in real ms. */
export const SOON_MS = 5_000

export type Entry = { offset: string; chunk: StreamChunk }

export const hookOf = (context: CaseContext): StreamsHook => context.options.streams ?? defaultStreamsHook

/** Streams on the case's store, or on `store` (another instance), with the case's clock. */
export function streamsOn(context: CaseContext, store = context.store, secrets?: readonly string[]): StreamsUnderTest {
  return hookOf(context).streams({ store, clock: context.clock, retainMs: RETAIN_MS, secrets })
}

/** Locks on the case's store (or `store`); they renew only when `settings.renewEveryMs` says so, so only the cases of renewal depend on its timing. */
export function locksOn(
  context: CaseContext,
  store = context.store,
  settings: { ttlMs?: number; renewEveryMs?: number } = {},
): LocksUnderTest {
  return hookOf(context).locks({
    store,
    clock: context.clock,
    ttlMs: settings.ttlMs ?? RACER_LOCK_SETTINGS.ttlMs,
    renewEveryMs: settings.renewEveryMs ?? RACER_LOCK_SETTINGS.renewEveryMs,
    waitMs: RACER_LOCK_SETTINGS.waitMs,
  })
}

/** `promise`, or a failure naming `what` when it takes longer than `ms`. */
export async function within<T>(promise: Promise<T>, what: string, ms = SOON_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new assert.AssertionError({ message: `${what}: still waiting after ${ms} ms` })), ms)
  })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

/** Every entry of a read, to its end (bounded in time). */
export async function readToEnd(iterable: AsyncIterable<Entry>, what: string, ms = SOON_MS): Promise<Entry[]> {
  const out: Entry[] = []
  await within(
    (async () => {
      for await (const entry of iterable) out.push(entry)
    })(),
    `${what} (it had ${out.length} entries; a read must end once the stream is closed)`,
    ms,
  )
  return out
}

/** Reads in the background; `entries` fills as they come. */
export function startReading(iterable: AsyncIterable<Entry>): { entries: Entry[]; done: Promise<void> } {
  const entries: Entry[] = []
  const done = (async () => {
    for await (const entry of iterable) entries.push(entry)
  })()
  done.catch(() => {})
  return { entries, done }
}

/** Waits until `test` holds, polling (bounded in time). */
export async function until(test: () => boolean, what: string, ms = SOON_MS): Promise<void> {
  const deadline = performance.now() + ms
  while (!test()) {
    if (performance.now() > deadline) assert.fail(`${what}: not so after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

export const deltas = (entries: readonly Entry[]) => entries.map((e) => (e.chunk as { delta?: string }).delta)
export const runIdOf = (name: string) => `run-${name}-${Math.random().toString(36).slice(2, 8)}`
export const textsOf = (chunks: readonly StreamChunk[]) => chunks.map((c) => (c as { delta?: string }).delta)
/** Text chunks numbered `from` to `to`. */
export const chunks = (from: number, to: number): StreamChunk[] => Array.from({ length: to - from + 1 }, (_, i) => textChunk(from + i))
/** A snapshot, bounded in time: a snapshot never waits for more. */
export const snap = (durability: { snapshot(): Promise<Entry[]> }): Promise<Entry[]> =>
  within(durability.snapshot(), 'snapshot (it must resolve with what is stored, never wait)')
