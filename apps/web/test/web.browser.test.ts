import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type App, startApp } from '../src/app.js'
import { Gates } from '../src/gates.js'
import { paidAnswer } from '../src/server/model.js'

// Chromium from Debian's packages, as the inspector's browser tests use it; .ci/run installs it.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)
const inCi = ['true', '1', 'yes'].includes(String(process.env.CI ?? '').toLowerCase())
if (!hasChromium && inCi) {
  describe('the web app in a browser', () => {
    it('needs Chromium', () => {
      throw new Error(
        `Chromium is not at ${CHROMIUM}; .ci/run installs it (apt-get install -y chromium). With CI set its absence is a failure.`,
      )
    })
  })
}

/** Waits for the page as a person would: every 50 ms, 20 s at most (a busy CI machine). */
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 20_000, interval: 50 })
const answers = (page: Page) => page.locator('.message.assistant .text').allTextContents()

describe.skipIf(!hasChromium)('the web app in a browser', () => {
  const gatesDir = mkdtempSync(join(tmpdir(), 'web-gates-'))
  const gates = new Gates(gatesDir)
  let app: App
  let browser: Browser
  let page: Page
  const sessionId = () => page.evaluate(() => localStorage.getItem('web.sessionId') ?? '')
  const billingOf = async (orderId: string) =>
    (await app.billing()).filter((call) => call.orderId === orderId).map(({ kind, outcome, pid, ref }) => ({ kind, outcome, pid, ref }))
  const send = async (prompt: string) => {
    await page.fill('#prompt', prompt)
    await page.click('#send')
  }

  beforeAll(async () => {
    const schema = `web_test_${process.pid}_${Date.now().toString(36)}`
    app = await startApp({ port: 0, schema, gatesDir, dropSchema: true })
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    page = await browser.newPage()
    await page.goto(app.url)
  })
  afterAll(async () => {
    await browser?.close()
    await app?.stop()
    rmSync(gatesDir, { recursive: true, force: true })
  })

  it('runs the checkout tool for a prompt; a refresh mid-answer shows the same answer go on, once', async () => {
    gates.arm('answer:1')
    await send('Check out order 1.')
    await gates.reached('answer:1')
    // Half the answer is on the page, the model holds at its middle.
    await poll(async () => (await answers(page)).join()).toMatch(/^Order 1 is paid with charge ch_\w+, and invoice/)
    await page.reload()
    // After the refresh: the prompt and the half answer again, from the server (the page keeps nothing).
    await poll(() => page.locator('.message.user').allTextContents()).toEqual(['Check out order 1.'])
    await poll(async () => (await answers(page)).join()).toMatch(/^Order 1 is paid with charge ch_\w+, and invoice/)
    expect((await answers(page)).join()).not.toContain('Thank you')
    gates.open('answer:1')
    const [charge, invoice] = await billingOf('1')
    await poll(() => answers(page)).toEqual([paidAnswer('1', charge!.ref, invoice!.ref)])
    expect(await page.locator('.tool.call').allTextContents()).toEqual(['checkout {"orderId":"1"}'])
    expect((await billingOf('1')).map((c) => `${c.kind} ${c.outcome}`)).toEqual(['charge done', 'invoice done'])
  })

  it('finishes with one charge and one invoice when the server driving the turn is SIGKILLed between them', async () => {
    gates.arm('charged:2')
    await send('Check out order 2.')
    const killed = await gates.reached('charged:2')
    expect(app.servers.map((s) => s.pid)).toContain(killed)
    process.kill(killed, 'SIGKILL')
    await poll(async () => (await answers(page)).at(-1) ?? '').toMatch(/^Order 2 is paid .*Thank you for shopping with us!$/)
    const calls = await billingOf('2')
    // One charge (by the killed process), one invoice (by the worker of the other server): no call ran twice.
    expect(calls.map((c) => `${c.kind} ${c.outcome}`)).toEqual(['charge done', 'invoice done'])
    expect(calls[0]!.pid).toBe(killed)
    expect(calls[1]!.pid).not.toBe(killed)
    expect((await answers(page)).at(-1)).toBe(paidAnswer('2', calls[0]!.ref, calls[1]!.ref))
    expect(await page.locator('.message.assistant').count()).toBe(2)
    // The resumed turn streams on after what the dead server stored: one tool call, one result on the page.
    expect(await page.locator('.tool.call').allTextContents()).toEqual(['checkout {"orderId":"1"}', 'checkout {"orderId":"2"}'])
    expect(await page.locator('.tool.result').count()).toBe(2)
    // The last word is on the page a moment before the run's end is: the status follows.
    await poll(() => page.locator('#status').textContent()).toBe('ready')
  })

  it('runs the same prompt submitted twice, to both servers, as one turn', async () => {
    await Promise.all(app.servers.map((s) => s.ready()))
    gates.arm('answer:3')
    const posted = page.waitForRequest((r) => r.url().endsWith('/api/chat') && r.method() === 'POST')
    const answered = page.waitForResponse((r) => r.url().endsWith('/api/chat') && r.request().method() === 'POST')
    await send('Check out order 3.')
    const first = await answered
    await gates.reached('answer:3')
    // The same request again (a double click, a retry after a lost reply), straight to the server that did not take the first.
    const other = app.servers.find((s) => s.name !== first.headers()['x-served-by'])!
    const again = fetch(`http://127.0.0.1:${other.port}/api/chat`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Run-Id': (await posted).headers()['x-run-id'] ?? '' },
      body: (await posted).postData(),
    })
    const second = await again
    gates.open('answer:3')
    expect(second.headers.get('X-Run-Id')).toBe(first.headers()['x-run-id'])
    expect(await second.text()).toContain('"RUN_FINISHED"')
    await poll(async () => (await answers(page)).at(-1) ?? '').toMatch(/^Order 3 is paid .*Thank you for shopping with us!$/)
    expect((await billingOf('3')).map((c) => `${c.kind} ${c.outcome}`)).toEqual(['charge done', 'invoice done'])
    const turns = (await app.records(await sessionId())).filter((r) => r.type === 'harness.turn.started')
    expect(turns).toHaveLength(3)
    expect(await page.locator('.message.user').allTextContents()).toEqual([
      'Check out order 1.',
      'Check out order 2.',
      'Check out order 3.',
    ])
  })
})
