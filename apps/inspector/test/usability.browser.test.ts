import { toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, durableTool } from '@tanstack/ai-harness'
import { createManualClock } from '@tanstack/ai-harness/store'
import { drain, scriptedText } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { startInspector } from '../src/index.js'
import { CHROMIUM, chromiumOrFail, poll } from './browser.js'

const hasChromium = chromiumOrFail('the inspector as a person uses it')

/** A memo long enough that a line cut at 80 characters hides the amount after it. */
const MEMO = `Quarterly settlement for the services listed in contract 2026-117, see the attached schedule; `.repeat(2)

/** Pays after approval, and confirms a flag first in another session. */
function shop() {
  const pay = durableTool(
    toolDefinition({
      name: 'pay',
      description: 'Sends money from the company account to the IBAN given',
      inputSchema: z.object({ memo: z.string(), iban: z.string(), amount: z.number() }),
      needsApproval: true,
    }),
    async () => 'paid',
  )
  const confirm = durableTool(
    toolDefinition({ name: 'confirm', description: 'Asks a person', inputSchema: z.object({}) }),
    async (_args, { step }) => {
      const answer = await step.ask({
        name: 'go',
        message: 'Ship it?',
        schema: z.object({ ok: z.boolean(), count: z.number(), note: z.string().describe('anything to add') }),
      })
      return answer.ok ? 'shipped' : 'kept'
    },
  )
  return defineHarness({
    name: 'shop',
    adapter: scriptedText(({ messages }) => {
      const last = messages.at(-1)
      if (last?.role !== 'user') return 'Done.'
      return String(last.content) === 'pay'
        ? { toolCalls: [{ name: 'pay', args: { memo: MEMO, iban: 'DE89370400440532013000', amount: 990_000 }, id: 'call-pay' }] }
        : { toolCalls: [{ name: 'confirm', args: {}, id: 'call-go' }] }
    }),
    tools: [pay, confirm],
  })
}

describe.skipIf(!hasChromium)('the inspector as a person uses it', () => {
  let browser: Browser | undefined
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  })
  afterAll(async () => {
    await browser?.close()
  })

  async function world() {
    const clock = createManualClock(Date.UTC(2026, 4, 2, 8, 30))
    const store = memoryStore({ clock })
    const host = createHost({ store, harnesses: shop(), clock, hostId: 'shop-1' })
    await drain((await host.open({ sessionId: 'pay-1' })).send('pay'))
    await drain((await host.open({ sessionId: 'ship-1' })).send('ship'))
    const inspector = await startInspector({ host, pollMs: 30 })
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } })
    const requests: string[] = []
    page.on('request', (request) => requests.push(request.url()))
    await page.goto(inspector.url)
    const token = new URL(inspector.url).hash.slice('#token='.length)
    return { store, host, clock, inspector, page, requests, token }
  }

  it("an approval shows the tool's description and the call's full arguments; a timeline line opens to the whole record; lines have times", async () => {
    const { page, inspector } = await world()
    await page.locator('#waiting li', { hasText: 'pay-1' }).click()
    const approval = page.locator('.approval')
    await poll(() => approval.textContent()).toContain('Sends money from the company account to the IBAN given')
    const shown = JSON.parse((await approval.locator('pre.arguments').textContent()) ?? 'null')
    expect(shown).toEqual({ memo: MEMO, iban: 'DE89370400440532013000', amount: 990_000 })
    const call = page.locator('#timeline tr[data-type="harness.assistant"]')
    expect(await call.locator('summary').textContent()).toContain('…')
    await call.locator('summary').click()
    expect(await call.locator('pre.record').textContent()).toContain('990000')
    expect(await page.locator('#timeline tr[data-type="harness.turn.started"] td.time').textContent()).toBe('2026-05-02 08:30:00Z')
    expect(await call.locator('td.time').textContent()).toBe('≈ 2026-05-02 08:30:00Z')
    await inspector.close()
  })

  it('an answer form starts empty: one click sends no false, 0 or "" (the server refuses it), and nothing is logged', async () => {
    const { page, store, inspector } = await world()
    await page.locator('#waiting li', { hasText: 'ship-1' }).click()
    const form = page.locator('form.question')
    await poll(() => form.count()).toBe(1)
    expect(await form.locator('select[name="root[ok]"]').inputValue()).toBe('')
    expect(await form.locator('input[name="root[count]"]').inputValue()).toBe('')
    expect(await form.locator('input[name="root[note]"]').inputValue()).toBe('')
    expect(await form.textContent()).toContain('anything to add')
    await form.locator('button[type=submit]').click()
    await poll(() => form.locator('.result').textContent()).toContain('ANSWER_INVALID')
    expect((await store.read('ship-1')).filter((e) => e.record.type === 'harness.answer')).toEqual([])
    await form.locator('select[name="root[ok]"]').selectOption({ label: 'yes (true)' })
    await form.locator('input[name="root[count]"]').fill('3')
    await form.locator('input[name="root[note]"]').fill('fine')
    await form.locator('button[type=submit]').click()
    await poll(() => form.locator('.result').textContent()).toContain('Answered')
    const [answer] = (await store.read('ship-1')).filter((e) => e.record.type === 'harness.answer')
    expect(answer?.record.answer).toEqual({ ok: true, count: 3, note: 'fine' })
    await inspector.close()
  })

  it('pages a log of 2,500 records: says where it is, loads earlier pages, and keeps live records across refreshes', async () => {
    const { page, store, inspector } = await world()
    let seq = (await store.read('pay-1')).length + 1
    for (let i = 0; i < 2500; i += 500) {
      await store.append(
        'pay-1',
        seq,
        Array.from({ length: 500 }, (_, k) => ({ type: 'app.note', n: i + k })),
      )
      seq += 500
    }
    const total = seq - 1
    await page.locator('#sessions li', { hasText: 'pay-1' }).click()
    await poll(() => page.locator('#position').textContent()).toBe(`records ${total - 499}–${total} of ${total}`)
    // Live: a record after the page loaded arrives, and another one's refresh does not take it away.
    await store.append('pay-1', total + 1, [{ type: 'app.note', n: 'live-1' }])
    await poll(() => page.locator('#timeline').textContent()).toContain('"n":"live-1"')
    await store.append('pay-1', total + 2, [{ type: 'app.note', n: 'live-2' }])
    await poll(() => page.locator('#timeline').textContent()).toContain('"n":"live-2"')
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(await page.locator('#timeline').textContent()).toContain('"n":"live-1"')
    await poll(() => page.locator('#position').textContent()).toBe(`records ${total - 499}–${total + 2} of ${total + 2}`)
    for (let i = 0; i < 5; i++) await page.locator('#earlier').click()
    await poll(() => page.locator('#position').textContent()).toBe(`records 1–${total + 2} of ${total + 2}`)
    expect(await page.locator('#timeline tr').count()).toBe(total + 2)
    expect(await page.locator('#earlier').isHidden()).toBe(true)
    await inspector.close()
  })

  it('the token never travels in a URL, and when the program ends the page says so', async () => {
    const { page, requests, token, inspector } = await world()
    await page.locator('#waiting li', { hasText: 'ship-1' }).click()
    await poll(async () => requests.some((url) => url.includes('/events'))).toBe(true)
    expect(requests.filter((url) => url.includes(token))).toEqual([])
    expect(page.url()).not.toContain(token)
    await inspector.close()
    await poll(() => page.locator('#connection').textContent()).toContain('The program that served this page has ended')
    expect(await page.locator('#connection').textContent()).not.toContain('undefined')
    expect(await page.locator('form.question button[type=submit]').isDisabled()).toBe(true)
  })
})
