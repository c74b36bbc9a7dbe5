import { toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, durableTool } from '@tanstack/ai-harness'
import { createManualClock } from '@tanstack/ai-harness/store'
import { drain, scriptedText } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type Inspector, startInspector } from '../src/index.js'
import { CHROMIUM, chromiumOrFail, poll } from './browser.js'

const hasChromium = chromiumOrFail('the inspector renders hostile session content inert')

/**
 * Payloads that run `__xss(label)` if any reaches the DOM as HTML, as a URL, or as a
 * template. Each carries its label, so a failure names the field it came through.
 */
const payloads = (label: string) => [
  `<img src=x onerror="__xss('${label}:img')">`,
  `<script>__xss('${label}:script')</script>`,
  `"><svg onload="__xss('${label}:svg')">`,
  `javascript:__xss('${label}:url')`,
  `<a href="javascript:__xss('${label}:a')">open</a>`,
  `<iframe srcdoc="<script>parent.__xss('${label}:iframe')</script>">`,
  `{{constructor.constructor('__xss("${label}:template")')()}}`,
  `<details open ontoggle="__xss('${label}:toggle')">`,
]
const all = (label: string) => payloads(label).join(' ')

/** A JSON Schema with a payload in every field a form renderer could show (and, with `links`, follow). */
function hostileSchema(withLinks: boolean) {
  const nested = {
    type: 'object',
    title: all('nested.title'),
    description: all('nested.description'),
    properties: { [payloads('nested.key')[0]!]: { type: 'string', title: all('deep.title'), default: all('deep.default') } },
  }
  return {
    type: 'object',
    title: all('schema.title'),
    description: all('schema.description'),
    $comment: all('schema.comment'),
    default: { note: all('schema.default') },
    examples: [all('schema.examples')],
    ...(withLinks ? { links: [{ rel: 'describedby', href: `javascript:__xss('schema.links')`, title: all('links.title') }] } : {}),
    properties: {
      note: {
        type: 'string',
        title: all('note.title'),
        description: all('note.description'),
        default: all('note.default'),
        examples: [all('note.examples')],
        format: all('note.format'),
        ...(withLinks ? { links: [{ href: `javascript:__xss('note.links')` }] } : {}),
      },
      amount: { type: 'number', title: all('amount.title'), description: all('amount.description'), default: 0 },
      choice: { enum: payloads('enum'), title: all('enum.title') },
      flag: { type: 'boolean', title: all('flag.title'), description: all('flag.description'), default: false },
      [payloads('key')[0]!]: { type: 'string', title: payloads('key.title')[1] },
      [payloads('key2')[2]!]: { type: 'integer' },
      list: { type: 'array', items: { type: 'string', title: all('items.title') }, title: all('list.title') },
      nested,
    },
    required: ['note'],
  }
}

/** One harness whose model and tools put payloads in every record they write. */
function hostileHarness() {
  const probe = durableTool(
    toolDefinition({
      name: 'probe',
      description: all('probe.description'),
      inputSchema: z.object({ memo: z.string(), links: z.boolean() }),
    }),
    async ({ memo, links }, { step }) => {
      await step.do(all('step.name'), () => ({ [all('value.key')]: all('step.value'), memo }))
      await step.ask({ name: 'hostile', message: all('ask.message'), schema: hostileSchema(links) as never })
      return all('tool.result')
    },
  )
  const pay = durableTool(
    toolDefinition({ name: 'pay', description: all('pay.description'), inputSchema: z.object({ memo: z.string() }), needsApproval: true }),
    async () => 'paid',
  )
  return defineHarness({
    name: 'hostile',
    adapter: scriptedText(({ messages }) => {
      const last = messages.at(-1)
      if (last?.role !== 'user') return all('assistant.text')
      const text = String(last.content)
      const tool = text.startsWith('pay') ? 'pay' : 'probe'
      const args = { memo: all(`${tool}.args`), ...(tool === 'probe' ? { links: text.includes('links') } : {}) }
      return {
        text: all('assistant.before-call'),
        toolCalls: [{ name: tool, args, id: `call-${tool} ${payloads('call.id')[tool === 'pay' ? 0 : 2]}` }],
      }
    }),
    tools: [probe, pay],
  })
}

async function hostileWorld() {
  const clock = createManualClock(Date.UTC(2026, 0, 1, 9))
  const store = memoryStore({ clock })
  const host = createHost({ store, harnesses: hostileHarness(), clock, hostId: 'host-1' })
  const ids = {
    ask: payloads('session.id')[0]!,
    links: `links ${payloads('session.id5')[4]!}`,
    pay: `pay ${payloads('session.id2')[1]!}`,
    app: payloads('session.id3')[2]!,
    cancelled: `cancelled ${payloads('session.id4')[3]!}`,
  }
  await drain((await host.open({ sessionId: ids.ask })).send(`probe ${all('prompt')}`))
  await drain((await host.open({ sessionId: ids.links })).send(`probe links ${all('prompt.links')}`))
  await drain((await host.open({ sessionId: ids.pay })).send(`pay ${all('prompt.pay')}`))
  const cancelled = await host.open({ sessionId: ids.cancelled })
  await drain(cancelled.send('probe'))
  await cancelled.cancel(all('cancel.reason'))
  await store.append(ids.app, 1, [
    { type: `app.${payloads('record.type')[0]!}`, [all('record.key')]: all('record.value'), at: all('record.at') },
    { type: 'app.note', text: all('record.text'), nested: { deep: [all('record.deep')] } },
  ])
  return { store, host, ids }
}

/** Everything in the page that would mean data became markup, and every payload that ran. */
async function damage(page: Page) {
  return page.evaluate(() => {
    const w = window as unknown as { __ran: string[]; __violations: string[] }
    const markup = [...document.querySelectorAll('img, svg, iframe, object, embed, style, a, script:not([src]), details[ontoggle]')].map(
      (node) => node.outerHTML.slice(0, 80),
    )
    const handlers = [...document.querySelectorAll('*')].flatMap((node) =>
      [...node.attributes]
        .filter(
          (a) =>
            a.name.startsWith('on') || (/^(href|src|action|formaction|xlink:href|srcdoc)$/.test(a.name) && /javascript:/i.test(a.value)),
        )
        .map((a) => `${node.tagName}[${a.name}]`),
    )
    return { ran: w.__ran, violations: w.__violations, markup, handlers }
  })
}

/** Opens every session, every timeline row, and the forms, as a curious person would. */
async function openEverything(page: Page, ids: Record<string, string>) {
  for (const id of Object.values(ids)) {
    await page.locator('#sessions li').filter({ hasText: id }).first().click()
    await poll(() => page.locator('#detail h2').first().textContent()).toContain(id)
    await poll(() => page.locator('#timeline tr').count()).toBeGreaterThan(1)
    await page.evaluate(() => {
      for (const details of document.querySelectorAll('#timeline details')) (details as HTMLDetailsElement).open = true
    })
    const form = page.locator('form.question')
    if ((await form.count()) > 0) {
      await form.locator('input[type=text]').first().fill(all('typed.answer'))
      await form.locator('button[type=submit]').click()
      await poll(() => form.locator('.result').textContent()).not.toBe('')
    }
  }
}

describe.skipIf(!hasChromium)('the inspector renders hostile session content inert', () => {
  let browser: Browser | undefined
  const inspectors: Inspector[] = []
  /** A new world of hostile sessions and an inspector on it (a test may answer its question). */
  const serve = async () => {
    const world = await hostileWorld()
    const inspector = await startInspector({ host: world.host, pollMs: 50 })
    inspectors.push(inspector)
    return { ...world, inspector }
  }
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  })
  afterAll(async () => {
    await browser?.close()
    for (const inspector of inspectors) await inspector.close()
  })

  it('sends a strict Content-Security-Policy with the page', async () => {
    const { inspector } = await serve()
    const response = await fetch(inspector.url.replace(/#.*/, ''))
    const csp = response.headers.get('content-security-policy') ?? ''
    expect(csp).toMatch(/script-src 'self'(;|$)/)
    expect(csp).toContain("form-action 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toContain("object-src 'none'")
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/)
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    const html = await response.text()
    expect(html).not.toMatch(/<script>|<script(?![^>]*\ssrc=)[^>]*>|\son\w+=/i)
  })

  // With the CSP in force, and without it (bypassCSP): the page itself must never make markup of data.
  for (const bypassCSP of [false, true]) {
    it(`no payload in a schema, a record or an id runs, or becomes markup (${bypassCSP ? 'CSP bypassed' : 'with CSP'})`, async () => {
      const world = await serve()
      const context = await browser!.newContext({ bypassCSP, viewport: { width: 1280, height: 900 } })
      await context.addInitScript(() => {
        const w = window as unknown as { __ran: string[]; __violations: string[]; __xss: (label: string) => void }
        w.__ran = []
        w.__violations = []
        w.__xss = (label) => void w.__ran.push(String(label))
        document.addEventListener('securitypolicyviolation', (event) => w.__violations.push(`${event.violatedDirective} ${event.sample}`))
      })
      const page = await context.newPage()
      const dialogs: string[] = []
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message())
        void dialog.dismiss()
      })
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(error.message))
      await page.goto(world.inspector.url)
      await poll(() => page.locator('#sessions li').count()).toBe(Object.keys(world.ids).length)
      const inert = { ran: [], violations: [], markup: [], handlers: [] }
      // The question's form: nothing of the schema ran or became markup, and the payloads are there as text.
      await page.locator('#sessions li').filter({ hasText: world.ids.ask }).first().click()
      await poll(() => page.locator('form.question').count()).toBe(1)
      expect(await damage(page)).toEqual(inert)
      expect(await page.locator('form.question').textContent()).toContain(`<img src=x onerror="__xss('note.title:img')">`)
      expect(await page.locator('#detail').textContent()).toContain(`__xss('note.description:script')</script>`)
      // The approval: the tool's description and the call's arguments, as text.
      await page.locator('#sessions li').filter({ hasText: world.ids.pay }).first().click()
      await poll(() => page.locator('#detail .approval').count()).toBe(1)
      expect(await damage(page)).toEqual(inert)
      expect(await page.locator('.approval').textContent()).toContain(`__xss('pay.description:svg')`)
      expect(await page.locator('.approval pre.arguments').textContent()).toContain(`__xss('pay.args:iframe')`)
      expect(await page.locator('.approval').textContent()).toContain(`call-pay <img src=x onerror="__xss('call.id:img')">`)
      // Every session, every record opened, an answer typed and sent.
      await openEverything(page, world.ids)
      await page.locator('#sessions li').filter({ hasText: world.ids.ask }).first().click()
      await poll(() => page.locator('#timeline tr').count()).toBeGreaterThan(3)
      expect(await damage(page)).toEqual(inert)
      expect(dialogs).toEqual([])
      expect(errors).toEqual([])
      await context.close()
    })
  }
})
