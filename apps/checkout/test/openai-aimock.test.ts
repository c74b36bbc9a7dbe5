import { LLMock } from '@copilotkit/aimock'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, runCli, tempDataDir } from './support/cli.js'
import { count, readLedgers } from './support/ledger.js'

describe('with OPENAI_API_KEY: the real @tanstack/ai-openai adapter, against aimock on loopback', () => {
  const mock = new LLMock({ port: 0, host: '127.0.0.1' })
  const cleanups: Array<() => void> = []

  beforeAll(async () => {
    assertBuilt()
    // The model's three moves, matched on what the conversation holds so far.
    mock.on({ userMessage: /Place order 42/, hasToolResult: false }, { toolCalls: [{ name: 'checkout', arguments: '{"orderId":"42"}' }] })
    mock.on(
      { toolResultContains: 'chargeId' },
      { toolCalls: [{ name: 'notify', arguments: JSON.stringify({ to: 'ada@example.com', body: 'Your order 42 is paid.' }) }] },
    )
    mock.on({ toolResultContains: 'mailId' }, { content: 'Order 42 is paid and invoiced; the receipt is on its way.' })
    await mock.start()
  })
  afterAll(() => mock.stop())
  afterEach(() => {
    for (const remove of cleanups.splice(0)) remove()
  })

  it('survives the SIGKILL between charge and invoice, and the resumed process does not ask the model again for the cut call', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['--data-dir', data.dir, '--model', 'gpt-4o-mini'], {
      OPENAI_API_KEY: 'mock-key',
      OPENAI_BASE_URL: `${mock.url}/v1`,
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`model  openai gpt-4o-mini at ${mock.url}/v1`)
    expect(run.stdout).toContain('Result: OK, exactly one charge and one invoice per order')
    expect(run.stdout).toContain('Order 42 is paid and invoiced; the receipt is on its way.')

    const ledger = readLedgers(data.dir)
    expect(count(ledger, 'charge')).toBe(1)
    expect(count(ledger, 'invoice')).toBe(1)
    expect(count(ledger, 'send')).toBe(1)
    expect(ledger.find((l) => l.op === 'charge')!.pid).not.toBe(ledger.find((l) => l.op === 'invoice')!.pid)

    // Process 1 asked once (checkout) and died in the tool; process 2 ran the logged call
    // again without the model, then asked twice (notify, answer).
    // @tanstack/ai-openai speaks OpenAI's Responses API.
    expect(mock.getRequests().map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses', '/v1/responses'])
  })
})
