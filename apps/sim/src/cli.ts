#!/usr/bin/env node
import { decodePlan, runSimWorld, type SimReport, shrinkWorld } from '@tanstack/ai-harness/testing/node'
import { SIM_STORES, type SimStoreName, simBackends } from './backends.js'
import { describeFailure } from './replay.js'

interface Args {
  worlds: number
  store: SimStoreName
  from: number
  seed: number | undefined
  plan: string | undefined
  shrink: boolean
  trace: boolean
}

const USAGE =
  'usage: pnpm sim -- [--worlds N] [--store memory|memory-unfenced|pglite|dynamodb|s3] [--from SEED] [--seed SEED [--plan PLAN] [--trace]] [--no-shrink]'

function parseArgs(argv: string[]): Args {
  const args: Args = { worlds: 1_000, store: 'memory', from: 1, seed: undefined, plan: undefined, shrink: true, trace: false }
  const words = argv.filter((w) => w !== '--')
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    const value = () => {
      const next = words[++i]
      if (next === undefined) throw new Error(`${word} needs a value. ${USAGE}`)
      return next
    }
    if (word === '--worlds') args.worlds = Number(value())
    else if (word === '--store') args.store = value() as SimStoreName
    else if (word === '--from') args.from = Number(value())
    else if (word === '--seed') args.seed = Number(value())
    else if (word === '--plan') args.plan = value()
    else if (word === '--no-shrink') args.shrink = false
    else if (word === '--trace') args.trace = true
    else throw new Error(`Unknown argument ${word}. ${USAGE}`)
  }
  if (!SIM_STORES.includes(args.store)) throw new Error(`--store takes ${SIM_STORES.join(' or ')}, not ${args.store}.`)
  if (!(args.worlds >= 1) || !Number.isInteger(args.worlds)) throw new Error(`--worlds takes a whole number >= 1. ${USAGE}`)
  return args
}

/** Replays one world (with its shrunk plan, if given) and prints what it did. */
async function replay(args: Args, seed: number): Promise<number> {
  const backends = simBackends(args.store)
  try {
    const report = await runSimWorld({ seed, backend: backends.backend, ...(args.plan ? { plan: decodePlan(args.plan) } : {}) })
    console.log(`world ${seed}: ${JSON.stringify(report.plan)}`)
    console.log(`${report.virtualMs} virtual ms, ${report.appends} appends, ${report.invocations} fn calls, ${report.crashes} crashes`)
    if (args.trace) for (const line of report.trace) console.log(`  ${line}`)
    if (report.violations.length === 0) console.log('no invariant broken')
    else console.log(describeFailure(args.store, report))
    return report.violations.length === 0 ? 0 : 1
  } finally {
    await backends.close()
  }
}

/** Runs `args.worlds` worlds from seed `args.from`, with progress, then a summary; shrinks the first failure. */
async function soak(args: Args): Promise<number> {
  const backends = simBackends(args.store)
  const started = Date.now()
  let lastProgress = started
  const failures: SimReport[] = []
  let appends = 0
  try {
    for (let n = 0; n < args.worlds; n++) {
      const seed = args.from + n
      const report = await runSimWorld({ seed, backend: backends.backend })
      appends += report.appends
      if (report.violations.length > 0) {
        failures.push(report)
        const shrunk = args.shrink && failures.length === 1 ? await shrinkWorld({ seed, backend: backends.backend }, report) : undefined
        console.log(describeFailure(args.store, report, shrunk))
      }
      const now = Date.now()
      if (now - lastProgress > 2_000 || n === args.worlds - 1) {
        lastProgress = now
        const rate = ((n + 1) / ((now - started) / 1000)).toFixed(1)
        process.stderr.write(`\r${n + 1}/${args.worlds} worlds on ${args.store}, ${rate} worlds/s, ${failures.length} failing   `)
      }
    }
  } finally {
    await backends.close()
  }
  const seconds = (Date.now() - started) / 1000
  process.stderr.write('\n')
  console.log(
    `${args.worlds} worlds on ${args.store} (seeds ${args.from}..${args.from + args.worlds - 1}) in ${seconds.toFixed(1)} s ` +
      `(${(args.worlds / seconds).toFixed(1)} worlds/s, ${appends} appends): ${failures.length} failing` +
      (failures.length > 0 ? ` (seeds ${failures.map((f) => f.seed).join(', ')})` : ''),
  )
  return failures.length === 0 ? 0 : 1
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2))
  return args.seed === undefined ? soak(args) : replay(args, args.seed)
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exit(2)
  },
)
