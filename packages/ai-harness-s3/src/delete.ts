import { HarnessError } from '@tanstack/ai-harness/store'
import { isTombstone, listSlots, liveOf } from './batches.js'
import type { LogContext } from './context.js'
import { mapBounded } from './objects.js'

/** When an append keeps winning the tail, `delete` also takes this many batch slots after it at once. */
const SPECULATIVE_CLOSES = 4
/** Rounds of closing a log that keeps growing before `delete` gives up. */
const CLOSE_ROUNDS = 32
/** Tombstones written at once by `delete`. */
const ERASE_CONCURRENCY = 16

/**
 * Deletes a log so that it stays deleted. S3 cannot check a second object when it writes
 * one, so the guard sits on the slots themselves:
 *
 * 1. **Close** the live generation: an empty object (a tombstone) on the slot after its
 *    last batch, with `If-None-Match: *`. If an append took that slot first, look again.
 *    A writer appending back to back always learns the next slot before this does, so
 *    after the first lost round a round takes the next few slots at once: the writer can
 *    only write slot n+1 after it wrote slot n, so it wins at most the ones it was
 *    already sending, and the first slot this wins sits right after the writer's last
 *    batch. Tombstones are thus always the last slots of their generation.
 * 2. **Erase** every batch of this and earlier generations: each is overwritten by a
 *    tombstone, so a stale writer aiming at any slot it could know collides, and the
 *    records are gone.
 *
 * The next log of the id starts in the next generation at seq 1. Safe to repeat, and to
 * run twice at once. A writer that still holds a deleted log collides with a tombstone.
 */
export async function deleteLog(ctx: LogContext, logId: string): Promise<void> {
  const { io, keys } = ctx
  forgetLog(ctx, logId)
  // The listing's marker goes first: a first append that lands after the close below
  // looked at the tail after this, and puts its marker again.
  await io.delete(keys.session(logId))
  const closed = await closeLive(ctx, logId)
  if (closed >= 0) {
    const stale = (await listSlots(io, keys, logId)).filter((slot) => slot.gen <= closed && !isTombstone(slot))
    await mapBounded(stale, ERASE_CONCURRENCY, (slot) => io.put(slot.key, ''))
  }
  forgetLog(ctx, logId)
}

/** Step 1: closes the live generation; the last closed generation (-1 when none was ever written). */
async function closeLive(ctx: LogContext, logId: string): Promise<number> {
  const { io, keys } = ctx
  for (let round = 0; round < CLOSE_ROUNDS; round++) {
    const view = liveOf(await listSlots(io, keys, logId), 0)
    const last = view.batches.at(-1)
    // An empty live generation has nothing to close; earlier ones are closed already.
    if (!last) return view.gen - 1
    const slots = Array.from({ length: round === 0 ? 1 : SPECULATIVE_CLOSES }, (_, i) => last.batch + 1 + i)
    const won = await Promise.all(slots.map((batch) => io.putIfAbsent(keys.batch(logId, view.gen, batch), '')))
    if (won[0]) return view.gen
    // Otherwise the next round's listing says whether a slot further on closed it.
  }
  throw new HarnessError(
    'STORE_UNAVAILABLE',
    `Log ${JSON.stringify(logId)} kept growing under delete (${CLOSE_ROUNDS} tries). Stop its writers, then delete again.`,
  )
}

/** Drops what this instance remembers of the log. */
function forgetLog(ctx: LogContext, logId: string): void {
  ctx.caches.forget(logId)
  ctx.points.forget(logId)
}
