#!/usr/bin/env node
import { Command, CommanderError } from 'commander'
import { type LogFlags, logCommand } from './commands/log.js'
import { type RunFlags, runCommand } from './commands/run.js'
import { CliError, ExitCode, messageOf } from './exit-codes.js'
import { addRunOptions, addStoreOptions } from './options.js'
import { CHILD_COMMAND } from './session/child-protocol.js'
import { childMain } from './session/child-main.js'

const EXIT_CODES_HELP = `
Exit codes:
  0  ok: exactly one charge and one invoice per order (log: the session was printed)
  1  failed: a process failed, or the ledgers show a duplicate or missing charge or invoice
  2  bad usage: unknown flag, bad value, or a store without the settings it needs
  3  store unreachable: the store could not be reached or opened (or its data folder is in use)
  4  log: no session with that id

Without OPENAI_API_KEY the model is scripted (no network). With it, @tanstack/ai-openai
is used (OPENAI_BASE_URL for another endpoint).`

/** Builds the program: the default command, `log`, and the hidden child command. */
function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command('checkout')
    .description(
      "The seed's checkout agent, crashing for real: process 1 places an order and is killed with SIGKILL between the charge and the invoice; process 2 resumes the session from the log. Ends with one charge and one invoice per order.",
    )
    .exitOverride()
    .enablePositionalOptions()
    .showHelpAfterError('(run checkout --help to see every flag)')
    .addHelpText('after', EXIT_CODES_HELP)
  addRunOptions(addStoreOptions(program)).action(async (flags: RunFlags) => setExitCode(await runCommand(flags)))

  addStoreOptions(
    program
      .command('log')
      .description("print a session's log as a timeline (--json: the raw records)")
      .argument('<sessionId>', 'the session id a run printed'),
  ).action(async (sessionId: string, flags: LogFlags) => setExitCode(await logCommand(sessionId, flags)))

  program
    .command(CHILD_COMMAND, { hidden: true })
    .argument('<job>')
    .action(async (job: string) => setExitCode(await childMain(job)))
  return program
}

async function main(): Promise<void> {
  // `pnpm checkout -- --json` hands us a leading "--"; it means nothing here.
  const args = process.argv.slice(2)
  if (args[0] === '--') args.shift()
  const json = args.includes('--json')
  let exitCode: number = ExitCode.Ok
  try {
    await buildProgram((code) => {
      exitCode = code
    }).parseAsync(args, { from: 'user' })
  } catch (error) {
    exitCode = report(error, json)
  }
  process.exitCode = exitCode
  // Open handles (a pg pool's idle timer, an SDK's sockets) must not keep a finished run alive.
  setTimeout(() => process.exit(exitCode), 100).unref()
}

/** Prints an error as one clear line (and a JSON document with --json); returns its exit code. */
function report(error: unknown, json: boolean): number {
  if (error instanceof CommanderError) {
    // Commander has printed the message already; help and version are not errors.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.help' || error.code === 'commander.version')
      return ExitCode.Ok
    if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: { message: error.message, exitCode: ExitCode.Usage } })}\n`)
    return ExitCode.Usage
  }
  const exitCode = error instanceof CliError ? error.exitCode : ExitCode.Failed
  const message = messageOf(error)
  process.stderr.write(`checkout: error: ${message}\n`)
  if (!(error instanceof CliError) && process.env.CHECKOUT_DEBUG) process.stderr.write(`${(error as Error)?.stack ?? ''}\n`)
  if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: { message, exitCode } })}\n`)
  return exitCode
}

await main()
