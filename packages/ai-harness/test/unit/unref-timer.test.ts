import { afterEach, describe, expect, it, vi } from 'vitest'
import { type Timer, unrefTimer } from '../../src/runtime/timers.js'

afterEach(() => {
  vi.unstubAllGlobals()
})

// The lease timer must not keep a process alive, on any runtime, and must not assume a
// Node timer object: workerd's has no unref, Deno's timers are numbers.
describe('unrefTimer', () => {
  it("calls a Node or Bun timer's unref", () => {
    const unref = vi.fn()
    unrefTimer({ unref } as unknown as Timer)
    expect(unref).toHaveBeenCalledOnce()
  })

  it('leaves a timer object without unref alone (workerd)', () => {
    expect(() => unrefTimer({} as unknown as Timer)).not.toThrow()
  })

  it('passes a numeric timer to Deno.unrefTimer on Deno, and does nothing where there is none', () => {
    expect(() => unrefTimer(7 as unknown as Timer)).not.toThrow()
    const denoUnref = vi.fn()
    vi.stubGlobal('Deno', { unrefTimer: denoUnref })
    unrefTimer(7 as unknown as Timer)
    expect(denoUnref).toHaveBeenCalledWith(7)
  })

  it('lets the process exit while only a real Node interval waits', () => {
    const timer = setInterval(() => {}, 60_000)
    unrefTimer(timer)
    expect(timer.hasRef()).toBe(false)
    clearInterval(timer)
  })
})
