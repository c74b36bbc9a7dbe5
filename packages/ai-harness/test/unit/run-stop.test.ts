import { ParkSignal } from '../../src/runtime/park.js'
import { describe, expect, it } from 'vitest'
import { RunStop } from '../../src/runtime/run-stop.js'

describe('RunStop: the one stop authority of a run of a turn', () => {
  it('a park stops the run on purpose: the signal aborts, the reason is the park, and a later failure does not replace it', () => {
    const stop = new RunStop()
    const park = new ParkSignal('call-1', 'ask', null, {})
    stop.park(park)
    stop.stop(new Error('a write failed after the park'))
    expect(stop.signal.aborted).toBe(true)
    expect(stop.reason).toBe(park)
    expect(stop.parked).toBe(true)
    expect(stop.stopped).toBe(true)
  })

  it("the session's own failure is the reason, and no park once it stopped", () => {
    const stop = new RunStop()
    const lost = new Error('lease lost')
    stop.stop(lost)
    stop.park(new ParkSignal('call-1', 'sleep', 1, {}))
    expect(stop.reason).toBe(lost)
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
    expect(stop.reason).toBe(lost)
  })
})
