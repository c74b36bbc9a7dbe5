import { toolDefinition } from '@tanstack/ai'
import { agentTool, defineHarness } from '@tanstack/ai-harness'
import { childSessionId } from '@tanstack/ai-harness/log'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { askHarness, chatHarness, faultWorld, gate, stepHarness } from '../support/faults.js'
import { codeOf, drain, TEST_LEASE_MS, recordsOf } from '../support/harness.js'

const NO_TRACE = { log: false, lease: false, wakeup: undefined }

describe('delete is forever', () => {
  it('a stale session object that sends after the delete writes nothing: no record, no wakeup, no lease', async () => {
    const world = faultWorld()
    const { host } = world.machine(chatHarness(), 'host')
    const stale = await host.open({ sessionId: 's' })
    await drain(stale.send('hi'))
    await world.direct.delete('s')
    expect(world.traces('s')).toEqual(NO_TRACE)
    expect(await codeOf(() => drain(stale.send('again')))).toBe('LEASE_LOST')
    expect(await codeOf(() => drain(stale.resume()))).toBe('LEASE_LOST')
    await stale.close()
    expect(world.traces('s')).toEqual(NO_TRACE)
    world.clock.advance(TEST_LEASE_MS + 1)
    await world.worker(chatHarness(), 'worker').poll()
    expect(world.traces('s')).toEqual(NO_TRACE)
  })

  it('a host driving a turn when the session is deleted writes nothing more, and nothing brings the session back', async () => {
    const world = faultWorld()
    const started = gate()
    const release = gate<string>()
    const { harness } = stepHarness(() => {
      started.open()
      return release.promise
    })
    const { host } = world.machine(harness, 'host')
    const session = await host.open({ sessionId: 's' })
    const stream = drain(session.send('work')).catch((error: { code?: string }) => error.code)
    await started.promise
    await world.direct.delete('s')
    release.open('done')
    expect(await stream).toBe('LOG_CONFLICT')
    await session.close()
    expect(world.traces('s')).toEqual(NO_TRACE)
    world.clock.advance(TEST_LEASE_MS + 1)
    await world.worker(harness, 'worker').poll()
    expect(world.traces('s')).toEqual(NO_TRACE)
  })

  it('a worker given the wakeup of a session without a log removes the wakeup and writes nothing (no lease, no record)', async () => {
    const world = faultWorld()
    await world.direct.wakeups!.schedule('gone', world.clock.now())
    const poll = await world.worker(chatHarness(), 'worker').poll()
    expect(poll).toMatchObject({ resumed: [], busy: [], failed: [], idle: ['gone'] })
    expect(world.traces('gone')).toEqual(NO_TRACE)
  })

  it('a new session with the same id starts clean', async () => {
    const world = faultWorld()
    const { host } = world.machine(chatHarness(), 'host')
    const first = await host.open({ sessionId: 's' })
    await drain(first.send('hi'))
    await host.delete({ sessionId: 's' })
    const again = await host.open({ sessionId: 's' })
    expect(again.needsRecovery).toBe(false)
    expect((await again.entries()).map((e) => [e.seq, e.record.type])).toEqual([[1, 'harness.session.opened']])
  })

  it('host.delete closes this host’s open session first, then deletes the log, lease and wakeup', async () => {
    const world = faultWorld()
    const { host } = world.machine(askHarness(), 'host')
    const session = await host.open({ sessionId: 'a' })
    const waiting = await host.open({ sessionId: 'w' })
    await drain(waiting.send('go'))
    await host.delete({ sessionId: 'a' })
    expect(session.status).toBe('closed')
    expect(world.traces('a')).toEqual(NO_TRACE)
    expect(world.traces('w').log).toBe(true)
    expect(await codeOf(() => drain(session.send('hi')))).toBe('INVALID_ARGUMENT')
    expect(world.traces('a')).toEqual(NO_TRACE)
  })

  it('host.delete deletes the sessions of the agent-tool calls too', async () => {
    const world = faultWorld()
    const child = defineHarness({ name: 'child', adapter: scriptedText(() => 'Child done.') })
    const helper = agentTool(toolDefinition({ name: 'helper', description: 'Asks a child agent', inputSchema: z.object({}) }), {
      harness: child,
      prompt: () => 'help',
    })
    const parent = defineHarness({
      name: 'parent',
      adapter: scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'helper', args: {}, id: 'call-1' }] } : 'Parent done.',
      ),
      tools: [helper],
    })
    const { host } = world.machine([parent, child], 'host')
    await drain((await host.open({ sessionId: 'p', harness: 'parent' })).send('go'))
    const childId = childSessionId('p', 'call-1')
    expect(world.traces(childId).log).toBe(true)
    await host.delete({ sessionId: 'p' })
    expect(world.traces('p')).toEqual(NO_TRACE)
    expect(world.traces(childId)).toEqual(NO_TRACE)
  })
})

describe('a refused open writes nothing', () => {
  it('a secret too short: SECRET_TOO_SHORT, and no lease or record is left', async () => {
    const world = faultWorld()
    const { host } = world.machine(chatHarness(), 'host')
    expect(await codeOf(() => host.open({ sessionId: 's', secrets: { key: 'short' } }))).toBe('SECRET_TOO_SHORT')
    expect(world.traces('s')).toEqual(NO_TRACE)
  })

  it('an unknown harness: INVALID_ARGUMENT, nothing left', async () => {
    const world = faultWorld()
    const { host } = world.machine(chatHarness(), 'host')
    expect(await codeOf(() => host.open({ sessionId: 's', harness: 'nope' }))).toBe('INVALID_ARGUMENT')
    expect(world.traces('s')).toEqual(NO_TRACE)
  })

  it('the wrong harness for an existing session: INVALID_ARGUMENT, and its lease is not touched', async () => {
    const world = faultWorld()
    const { host } = world.machine([chatHarness('a'), chatHarness('b')], 'host')
    await (await host.open({ sessionId: 's', harness: 'a' })).close()
    const held = world.data.leases.get('s')
    const lease = held && { ...held }
    const log = (await world.read('s')).length
    expect(await codeOf(() => host.open({ sessionId: 's', harness: 'b' }))).toBe('INVALID_ARGUMENT')
    expect(world.data.leases.get('s')).toEqual(lease)
    expect((await world.read('s')).length).toBe(log)
  })

  const badIds: Array<[string, string]> = [
    ['NUL', 'a\u0000b'],
    ['a lone surrogate', 'a\ud800b'],
    ['longer than the store keeps', 'x'.repeat(65)],
    ['empty', ''],
  ]
  for (const [what, id] of badIds) {
    it(`a session id that is ${what}: INVALID_ARGUMENT from open, answer and delete, nothing written`, async () => {
      const world = faultWorld({ limits: { maxLogIdBytes: 64 } })
      const { store, host } = world.machine(chatHarness(), 'host')
      expect(await codeOf(() => host.open({ sessionId: id }))).toBe('INVALID_ARGUMENT')
      expect(await codeOf(() => host.answer({ sessionId: id, questionId: 'q:ok', answer: {} }))).toBe('INVALID_ARGUMENT')
      expect(await codeOf(() => host.delete({ sessionId: id }))).toBe('INVALID_ARGUMENT')
      expect(store.calls.filter((c) => c.op !== 'read')).toEqual([])
      expect(world.data.logs.size + world.data.leases.size + world.data.wakeups.size).toBe(0)
    })
  }
})

describe('a refused open leaves the lease as it was', () => {
  it('even for a session that another host holds: the refusal comes before LEASE_HELD', async () => {
    const world = faultWorld()
    const holder = world.machine(chatHarness(), 'holder')
    await holder.host.open({ sessionId: 's' })
    const other = world.machine(chatHarness(), 'other')
    expect(await codeOf(() => other.host.open({ sessionId: 's', secrets: { k: 'short' } }))).toBe('SECRET_TOO_SHORT')
    expect(recordsOf(await world.read('s'), 'harness.session.opened')).toHaveLength(1)
  })
})
