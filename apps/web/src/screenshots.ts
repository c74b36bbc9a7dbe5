import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Page } from 'playwright-core'
import { startApp } from './app.js'
import { Gates } from './gates.js'

const OUT = fileURLToPath(new URL('../screenshots/', import.meta.url))
/** Chromium from Debian's packages (`apt-get install -y chromium`), as the browser tests use it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Polls until `read` is true, as a person waits for the page (20 s at most). */
async function until(read: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 20_000
  while (!(await read())) {
    if (Date.now() > end) throw new Error(`screenshots: the page never showed ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const answerText = (page: Page) => page.locator('.message.assistant .text').allTextContents()

/**
 * `pnpm web -- --screenshots`: the pictures of apps/web/README.md, from the app as it runs,
 * held at its gates: an answer mid-stream, the same answer finished after a refresh, and a
 * checkout whose server was SIGKILLed between the charge and the invoice.
 */
export async function takeScreenshots(say: (line: string) => void): Promise<void> {
  const gatesDir = mkdtempSync(join(tmpdir(), 'web-gates-'))
  const gates = new Gates(gatesDir)
  const app = await startApp({ port: 0, schema: `web_shots_${Date.now()}`, gatesDir, log: say, dropSchema: true })
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  try {
    mkdirSync(OUT, { recursive: true })
    const page = await browser.newPage({ viewport: { width: 1200, height: 720 } })
    await page.goto(app.url)
    gates.arm('answer:42')
    await page.click('#send')
    await gates.reached('answer:42')
    await until(async () => (await answerText(page)).join('').includes('charge'), 'the first half of the answer')
    await page.screenshot({ path: join(OUT, 'streaming.png') })
    await page.reload()
    await until(async () => (await answerText(page)).join('').includes('charge'), 'the answer again after the refresh')
    gates.open('answer:42')
    await until(async () => (await answerText(page)).join('').endsWith('with us!'), 'the whole answer')
    await until(async () => (await page.locator('#billing tbody tr').count()) === 2, 'the charge and the invoice')
    await page.screenshot({ path: join(OUT, 'answered.png') })

    gates.arm('charged:43')
    await page.fill('#prompt', 'Check out order 43.')
    await page.click('#send')
    const pid = await gates.reached('charged:43')
    process.kill(pid, 'SIGKILL')
    say(`screenshots: killed the server process ${pid} between the charge and the invoice of order 43`)
    await until(
      async () => (await answerText(page)).some((t) => t.startsWith('Order 43 is paid') && t.endsWith('with us!')),
      'order 43 paid',
    )
    await until(async () => (await page.locator('#billing tbody tr').count()) === 4, 'the second charge and invoice')
    await page.screenshot({ path: join(OUT, 'after-crash.png') })
    say(`screenshots: wrote streaming.png, answered.png and after-crash.png in ${OUT}`)
  } finally {
    await browser.close()
    await app.stop()
    rmSync(gatesDir, { recursive: true, force: true })
  }
}
