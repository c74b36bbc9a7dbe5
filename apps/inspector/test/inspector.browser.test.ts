import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { toolDefinition } from '@tanstack/ai'
import { createHost, createWorker, defineHarness, durableTool } from '@tanstack/ai-harness'
import { createManualClock } from '@tanstack/ai-harness/store'
import { drain, scriptedText } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type Inspector, startInspector } from '../src/index.js'
import { CHROMIUM, chromiumOrFail, poll } from './browser.js'

const here = dirname(fileURLToPath(import.meta.url))
const ARTIFACTS = join(here, '..', 'test-artifacts')
const hasChromium = chromiumOrFail('the inspector in a browser')

/** A checkout that asks the customer to confirm the amount before it charges. */
const confirmingCheckout = () =>
  defineHarness({
    name: 'checkout',
    adapter: scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'checkout', args: { orderId: '42' } }] } : 'Order 42 is paid.',
    ),
    tools: [
      durableTool(
        toolDefinition({ name: 'checkout', description: 'Charges an order', inputSchema: z.object({ orderId: z.string() }) }),
        async ({ orderId }, { step }) => {
          const total = await step.do(`total:${orderId}`, () => ({ amount: 42, currency: 'EUR' }))
          const answer = await step.ask({
            name: 'confirm-amount',
            message: `Charge ${total.amount} ${total.currency} for order ${orderId}? Type the amount to confirm.`,
            schema: z.object({ amount: z.number().min(1), note: z.string().optional() }),
          })
          if (answer.amount !== total.amount) return { charged: false, reason: 'the amount did not match' }
          const charge = await step.do(`charge:${orderId}`, ({ idempotencyKey }) => ({ chargeId: `ch_${idempotencyKey.length}` }))
          return { charged: true, ...charge }
        },
      ),
    ],
  })

describe.skipIf(!hasChromium)('the inspector in a browser', () => {
  let browser: Browser | undefined
  let inspector: Inspector | undefined
  const stops: Array<() => Promise<void>> = []
  afterAll(async () => {
    await browser?.close()
    await inspector?.close()
    for (const stop of stops) await stop()
  })

  it('shows a parked session, refuses an invalid answer, takes a valid one, and shows the session finish live', async () => {
    const clock = createManualClock(Date.UTC(2026, 0, 1, 9))
    const store = memoryStore({ clock })
    const harness = confirmingCheckout()
    const host = createHost({ store, harnesses: harness, clock, hostId: 'shop-1' })
    await drain((await host.open({ sessionId: 'order-42' })).send('Place order 42.'))
    await store.append('order-41', 1, [{ type: 'app.note', text: 'an older session' }])
    // A worker, as the app runs one: it resumes the session once the answer is in.
    const worker = createWorker({ store, harnesses: harness, clock, workerId: 'worker-1', pollMs: 50 })
    worker.start()
    stops.push(() => worker.stop())
    inspector = await startInspector({ host, pollMs: 50 })

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
    const pageErrors: string[] = []
    page.on('pageerror', (error) => pageErrors.push(error.message))
    await page.goto(inspector.url)

    // The parked session is listed as waiting for a person; the other one only among all.
    const waiting = page.locator('#waiting li')
    await poll(() => waiting.allTextContents()).toEqual(['order-42waiting'])
    await poll(() => page.locator('#sessions li').allTextContents()).toEqual(['order-41', 'order-42'])
    await waiting.first().click()
    await poll(() => page.locator('#status').textContent()).toBe('parked')
    expect(await page.locator('#parked').textContent()).toBe(' for an answer')
    const timeline = page.locator('#timeline tr')
    await poll(() => timeline.locator('td.kind').allTextContents()).toContain('ask')
    expect(await page.locator('#timeline').textContent()).toContain('total:42 = {"amount":42,"currency":"EUR"}')
    expect(await page.locator('#timeline').textContent()).toContain('host shop-1, lease fence')

    // The form comes from the question's JSON Schema: an amount field, checked by the server.
    const form = page.locator('form.question')
    await poll(() => form.textContent()).toContain('Charge 42 EUR for order 42?')
    const amount = form.locator('input[name="root[amount]"]')
    await amount.fill('0')
    await amount.press('Tab')
    await form.locator('button[type=submit]').click()
    await poll(() => form.locator('.result').textContent()).toContain('ANSWER_INVALID')
    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, 'inspector-waiting.png'), fullPage: true })
    expect(await store.read('order-42').then((entries) => entries.filter((e) => e.record.type === 'harness.answer'))).toEqual([])

    await amount.fill('42')
    await amount.press('Tab')
    await form.locator('button[type=submit]').click()

    // Live: the answer, the charge, the result and the end of the turn arrive without a reload.
    await poll(() => timeline.locator('td.kind').allTextContents()).toContain('turn.finished')
    await poll(() => page.locator('#status').textContent()).toBe('idle')
    await poll(() => waiting.allTextContents()).toEqual(['Nobody waits.'])
    const text = await page.locator('#timeline').textContent()
    expect(text).toContain('confirm-amount = {"amount":42')
    expect(text).toContain('turn.resumedthe open turn is taken over')
    expect(text).toMatch(/checkout ok \{"charged":true/)
    const results = (await store.read('order-42')).filter((e) => e.record.type === 'harness.tool.result')
    expect(results.map((e) => (e.record.result as { charged?: boolean }).charged)).toEqual([true])

    await page.screenshot({ path: join(ARTIFACTS, 'inspector.png'), fullPage: true })
    expect(existsSync(join(ARTIFACTS, 'inspector.png')) && existsSync(join(ARTIFACTS, 'inspector-waiting.png'))).toBe(true)
    expect(pageErrors).toEqual([])
  })
})
