import { describe, expect, it } from 'vitest'
import { CallStop, type Park, RunStop } from '../../src/runtime/run-stop.js'

const park = (reason: Park['reason'], until: number | null = null): Park => ({ toolCallId: 'call-1', reason, until, event: {} })

describe('RunStop: the one stop authority of a run of a turn', () => {
  it('a park stops the run on purpose: the signal aborts, the reason is the park, and a later failure does not replace it', () => {
    const stop = new RunStop()
    const asked = park('ask')
    stop.park(asked)
    stop.stop(new Error('a write failed after the park'))
    expect(stop.signal.aborted).toBe(true)
    expect(stop.reason).toEqual({ kind: 'park', park: asked })
    expect(stop.parked).toBe(true)
    expect(stop.stopped).toBe(true)
  })

  it("the session's own failure is the reason, and no park once it stopped", () => {
    const stop = new RunStop()
    const lost = new Error('lease lost')
    stop.stop(lost)
    stop.park(park('sleep', 1))
    expect(stop.reason).toEqual({ kind: 'failure', error: lost })
    expect(stop.parked).toBe(false)
  })

  it('a stop from outside (cancel, hand-off, close) aborts the signal with no reason of the run; a later one still counts', () => {
    const stop = new RunStop()
    expect(stop.stopped).toBe(false)
    stop.stop()
    expect(stop.stopped).toBe(true)
    expect(stop.reason).toBeUndefined()
    const lost = new Error('lease lost')
    stop.stop(lost)
    expect(stop.reason).toEqual({ kind: 'failure', error: lost })
  })
})

describe("CallStop: one call's stop authority, asked instead of the error's identity", () => {
  it('an own failure is known by the value noted, not by the error: an equal error the tool throws itself is a tool error', async () => {
    const stop = new CallStop()
    const nested = Object.assign(new Error('lease lost'), { code: 'LEASE_LOST' })
    await expect(stop.race(async () => Promise.reject(nested))).rejects.toBe(nested)
    const lost = Object.assign(new Error('lease lost'), { code: 'LEASE_LOST' })
    const raced = new CallStop()
    // The tool wraps the harness's failure in its own error: the call still stops, for the noted failure.
    const result = await raced.race(async () => {
      throw new Error('my wrapper', { cause: raced.fail(lost) })
    })
    expect(result).toEqual({ stopped: true, reason: { kind: 'failure', error: lost } })
  })

  it('a parked step does not settle while the call is raced: the race ends with the park, and the tool sees nothing', async () => {
    const stop = new CallStop()
    const seen: string[] = []
    const result = await stop.race(async () => {
      try {
        await stop.park(park('sleep', 5))
        seen.push('resumed')
      } catch {
        seen.push('catch')
      } finally {
        seen.push('finally')
      }
      return 'done'
    })
    await Promise.resolve()
    expect(result).toEqual({ stopped: true, reason: { kind: 'park', park: park('sleep', 5) } })
    expect(seen).toEqual([])
  })

  it('a call nobody races (a cancel probe) gets an error where its step parked', async () => {
    const stop = new CallStop()
    await expect(stop.park(park('ask'))).rejects.toThrow(/waits \(ask\)/)
    expect(stop.reason?.kind).toBe('park')
  })
})
