import { type Command, InvalidArgumentError, Option } from 'commander'
import { ORDER_ID_PATTERN } from './agent/prompt.js'
import { CRASH_POINTS } from './session/crash-points.js'
import { STORE_KINDS } from './store/store-config.js'

/** Flags every command that touches the store takes. */
export function addStoreOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--store <kind>',
        'where the session log lives: embedded PGlite in --data-dir, memory (this process only), postgres, dynamodb or s3',
      )
        .choices(STORE_KINDS)
        .default('pglite')
        .env('CHECKOUT_STORE'),
    )
    .addOption(
      new Option('--data-dir <dir>', 'folder for the PGlite database and the billing and mailer ledgers')
        .default('.checkout-data')
        .env('CHECKOUT_DATA_DIR'),
    )
    .addOption(
      new Option('--database-url <url>', 'postgres: connection URL (default: the PG* variables, else 127.0.0.1:5432)').env('DATABASE_URL'),
    )
    .addOption(new Option('--pg-schema <name>', 'postgres: schema of the harness tables (created when missing)').default('checkout'))
    .addOption(
      new Option(
        '--endpoint <url>',
        'dynamodb/s3: endpoint URL of a local server (default: DYNAMODB_ENDPOINT, S3_ENDPOINT or AWS_ENDPOINT_URL)',
      ),
    )
    .addOption(new Option('--region <region>', 'dynamodb/s3: AWS region (default: AWS_REGION, else us-east-1 with an endpoint)'))
    .addOption(
      new Option('--table <name>', 'dynamodb: table name, created when missing').default('ai-harness').env('CHECKOUT_DYNAMODB_TABLE'),
    )
    .addOption(new Option('--bucket <name>', 's3: bucket, which must exist').env('CHECKOUT_S3_BUCKET'))
    .addOption(new Option('--prefix <prefix>', 's3: key prefix of the sessions').default('checkout'))
    .addOption(new Option('--json', 'print one JSON document on stdout instead of text (progress stays on stderr)'))
}

/** Flags of the default command. */
export function addRunOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--order <id>', `order to place; repeat for several (default: 42). Letters, digits, _ and -`)
        .argParser(collectOrder)
        .default([]),
    )
    .addOption(new Option('--email <address>', 'customer address the receipt goes to').default('ada@example.com').argParser(checkEmail))
    .addOption(new Option('--session <id>', 'session id (default: a new one per run, printed at the start)'))
    .addOption(
      new Option(
        '--crash <point>',
        'where process 1 is killed: charge-logged (after the charge step is in the log, before the invoice), charge-unlogged (after billing charged, before the step is logged: billing refuses the replayed key), email-logged (after the email step is in the log, before notify returns), email-unlogged (after the mailer sent, before the step is logged: verify finds the email in the outbox), or none',
      )
        .choices(CRASH_POINTS)
        .default('charge-logged'),
    )
    .addOption(
      new Option('--model <name>', 'OpenAI model, used when OPENAI_API_KEY is set (OPENAI_BASE_URL picks another endpoint)').default(
        undefined,
      ),
    )
    .addOption(
      new Option(
        '--ask',
        'the checkout asks the customer to confirm the amount (step.ask) before it charges: the program prints the inspector URL and waits for the answer',
      ),
    )
    .addOption(
      new Option(
        '--answer <answer>',
        'with --ask: answer the question without waiting ("yes" confirms the quoted amount, or the answer as JSON, e.g. {"amount":42})',
      ),
    )
    .addOption(
      new Option(
        '--fail-invoice',
        'the invoice service refuses the invoice: the checkout call fails, and the undo of its charge step refunds the charge',
      ),
    )
    .addOption(
      new Option('--lease-ms <ms>', 'how long a process holds the session lease before another host may take it (process 2 waits for it)')
        .default(5_000)
        .argParser(positiveInt),
    )
}

function collectOrder(value: string, previous: string[]): string[] {
  if (!ORDER_ID_PATTERN.test(value)) throw new InvalidArgumentError('An order id is 1 to 64 letters, digits, "_" or "-".')
  return [...previous, value]
}

function checkEmail(value: string): string {
  if (!/^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$/.test(value)) throw new InvalidArgumentError('Give an address like ada@example.com.')
  return value
}

function positiveInt(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1000) throw new InvalidArgumentError('Give a whole number of milliseconds, at least 1000.')
  return n
}
