#!/usr/bin/env node
// @ts-check
// `pnpm checkout`, `pnpm inspector`, `pnpm bench`: builds what the app runs on, saying what
// it builds while it works, then runs the app with the arguments given.
//
//   node tooling/run-app.mjs <workspace package> <its built cli> [arguments of the app...]
//
// The build is turbo's `build:js` (cached: a second run builds nothing): each package's
// JavaScript only, file by file (tooling/transpile.mjs), which is all a program needs; the
// libraries' declarations are `build`'s, for typecheck, tests and packing. Turbo's own
// lines are kept back and printed only when the build fails.
import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** `pkg:build: cache miss, executing <hash>`: turbo starts building `pkg`. */
const STARTS = /^(\S+):build:js: cache miss, executing/

/**
 * The packages whose build starts in turbo's output, in order.
 * @param {string} output
 * @returns {string[]}
 */
export function builtPackages(output) {
  return output.split('\n').flatMap((line) => STARTS.exec(line.trim())?.[1] ?? [])
}

/**
 * Runs turbo's build of `app` and its dependencies; resolves with turbo's exit code.
 * @param {string} app
 * @param {(line: string) => void} say
 * @returns {Promise<number>}
 */
export function build(app, say) {
  return new Promise((resolvePromise) => {
    const started = Date.now()
    let output = ''
    let announced = false
    const turbo = spawn(
      resolve(root, 'node_modules', '.bin', 'turbo'),
      ['run', 'build:js', `--filter=${app}...`, '--output-logs=new-only'],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, FORCE_COLOR: '0', TURBO_NO_UPDATE_NOTIFIER: '1' },
      },
    )
    const onData = (/** @type {Buffer} */ chunk) => {
      const text = chunk.toString('utf8')
      output += text
      for (const name of builtPackages(text)) {
        if (!announced) say(`${app}: building the packages it runs on (the first run only; later runs reuse the build)`)
        announced = true
        say(`  building ${name}`)
      }
    }
    turbo.stdout.on('data', onData)
    turbo.stderr.on('data', onData)
    turbo.once('error', (error) => {
      say(`${app}: could not run turbo (${error.message}); run pnpm install first`)
      resolvePromise(1)
    })
    turbo.once('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1)
      if (code !== 0) {
        process.stderr.write(output)
        say(`${app}: the build failed (turbo exited with ${code}); its output is above`)
      } else if (announced) say(`${app}: built in ${seconds} s`)
      resolvePromise(code ?? 1)
    })
  })
}

/**
 * Runs the built app with the arguments; resolves with its exit code (or the signal that ended it).
 * @param {string} cli
 * @param {string[]} args
 * @returns {Promise<number | NodeJS.Signals>}
 */
function runApp(cli, args) {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [resolve(root, cli), ...args], { stdio: 'inherit' })
    // Ctrl-C reaches the app too (same process group): let it decide how to end.
    const ignore = () => {}
    process.on('SIGINT', ignore)
    process.on('SIGTERM', () => child.kill('SIGTERM'))
    child.once('error', (error) => {
      console.error(`could not start ${cli}: ${error.message}`)
      resolvePromise(1)
    })
    child.once('close', (code, signal) => resolvePromise(signal ?? code ?? 1))
  })
}

async function main() {
  const [app, cli, ...args] = process.argv.slice(2)
  if (!app || !cli) {
    console.error('usage: node tooling/run-app.mjs <workspace package> <its built cli> [arguments...]')
    process.exit(2)
  }
  const say = (/** @type {string} */ line) => console.log(line)
  const built = await build(app, say)
  if (built !== 0) process.exit(built)
  const ended = await runApp(cli, args)
  // Ended by a signal: exit as a shell reports it (128 + its number).
  process.exit(typeof ended === 'string' ? 128 + (constants.signals[ended] ?? 0) : ended)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
