import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool } from '@tanstack/ai-harness'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, createWorld, drain, recordsOf } from '../support/harness.js'

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

describe('tracing is optional', () => {
  it('with @opentelemetry/api but no SDK registered, nothing is recorded: turn.started keeps no trace context', async () => {
    const world = createWorld()
    const tool = durableTool(toolDefinition({ name: 'work', description: 'w', inputSchema: z.object({}) }), async (_a, { step }) =>
      step.do('one', () => 'ok'),
    )
    const session = await world
      .start(defineHarness({ name: 'h', adapter: batchModel([{ name: 'work' }]), tools: [tool] }), 'host')
      .host.open({ sessionId: 's' })
    await drain(session.send('go'))
    const entries = await world.read('s')
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
    expect(recordsOf(entries, 'harness.turn.started')[0]).not.toHaveProperty('trace')
  })

  it('the package loads and runs a session in a process where @opentelemetry/api is not installed', async () => {
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', here('../support/without-otel/register.mjs'), here('../support/without-otel/child.mjs')],
        { cwd: here('..'), timeout: 60_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      )
    })
    expect(JSON.parse(output)).toEqual({
      // The child really could not load it: the test is not passing by accident.
      otel: 'ERR_MODULE_NOT_FOUND',
      types: [
        'harness.session.opened',
        'harness.turn.started',
        'harness.assistant',
        'harness.step.started',
        'harness.step.failed',
        'harness.step.started',
        'harness.step',
        'harness.tool.result',
        'harness.assistant',
        'harness.turn.finished',
      ],
      traced: false,
    })
  })
})
