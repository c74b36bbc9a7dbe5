import type { StreamChunk } from '@tanstack/ai'

/** Reads a session's stream to its end and returns every chunk. */
export async function drain(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

/**
 * Runs a stream until its store crashes. A crashed run hangs forever, as a killed process
 * would, so this waits for the store's crash flag (yielding to the event loop) and fails
 * if the stream ends or throws first, or the crash point is never reached.
 */
export async function runUntilCrash(
  store: { readonly crashed: boolean },
  stream: AsyncIterable<StreamChunk>,
  options: { what?: string; timeoutMs?: number } = {},
): Promise<void> {
  const what = options.what ?? 'the run'
  let outcome: string | undefined
  drain(stream).then(
    () => {
      outcome = 'ended'
    },
    (error: unknown) => {
      outcome = `threw ${String(error)}`
    },
  )
  const deadline = Date.now() + (options.timeoutMs ?? 60_000)
  while (!store.crashed) {
    if (outcome) throw new Error(`${what}: the run ${outcome} before the crash point.`)
    if (Date.now() > deadline) throw new Error(`${what}: the crash point was never reached.`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}
