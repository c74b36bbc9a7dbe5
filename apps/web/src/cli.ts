#!/usr/bin/env node
/**
 * `pnpm web`: the shop assistant behind a web app. Finds or starts PostgreSQL, starts two
 * server processes and the round-robin proxy in front of them, and prints the page's URL.
 * `pnpm web -- --screenshots` drives the page in Chromium instead and writes the README's
 * pictures (src/screenshots.ts).
 */
import { parseArgs } from 'node:util'
import { startApp } from './app.js'

const HELP = `pnpm web [-- options]

  --port <n>       the proxy's port (default 3000; 0 for any free one)
  --screenshots    drive the page in Chromium and write apps/web/screenshots/*.png, then exit
  --help           this text

PostgreSQL: the server at the PG* settings when one answers (default 127.0.0.1:5432,
database test, user postgres), else an embedded PostgreSQL 15 in a temporary folder.`

// `pnpm web -- --flag` hands the `--` on.
const args = process.argv.slice(2)
if (args[0] === '--') args.shift()
const { values } = parseArgs({
  args,
  options: { port: { type: 'string', default: '3000' }, screenshots: { type: 'boolean' }, help: { type: 'boolean' } },
})
const say = (line: string) => console.log(line)

if (values.help) {
  say(HELP)
} else if (values.screenshots) {
  // Loaded only here: it needs playwright-core and Chromium, which serving the page does not.
  const { takeScreenshots } = await import('./screenshots.js')
  await takeScreenshots(say)
} else {
  const app = await startApp({ port: Number(values.port), log: say })
  say(`web: open ${app.url} (servers a and b behind the proxy; schema ${app.schema}). Ctrl-C stops.`)
  say('web: try "Check out order 42.", refresh mid-answer, or kill a server: kill -9 <pid of the server that charged>')
  const stop = async () => {
    say('web: stopping')
    await app.stop()
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}
