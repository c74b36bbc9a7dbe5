/**
 * Which failures are worth another try. A conflict is never one: the store turns
 * those into `LOG_CONFLICT`, `LEASE_HELD` or `LEASE_LOST` before this is asked.
 */
import { isNetworkError } from '@tanstack/ai-harness/store'

/** SQLSTATEs that say "try again", not "you are wrong". */
const TRANSIENT_SQLSTATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '53300', // too_many_connections
  // and the shutdown states below: 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now
])

/** The server is going away or not up yet: the connection is gone, another one may work. */
const SHUTDOWN_SQLSTATES = new Set(['57P01', '57P02', '57P03'])

/** `pg` reports a lost or timed-out connection by message only, without a code. */
const TRANSIENT_MESSAGES = [
  /Query read timeout/i,
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /connection (?:is )?closed/i,
]

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** True for a SQLSTATE of class 08 (connection exception) or one of the "try again" states. */
export function isConnectionLoss(error: unknown): boolean {
  const code = codeOf(error)
  if (code !== undefined) return code.startsWith('08') || SHUTDOWN_SQLSTATES.has(code) || isNetworkError(error)
  const message = error instanceof Error ? error.message : ''
  return TRANSIENT_MESSAGES.some((pattern) => pattern.test(message))
}

/**
 * True when a PostgreSQL or socket error is transient: a lost or refused connection,
 * a serialization failure, a deadlock, too many connections, a server shutting down.
 */
export function isTransientPostgresError(error: unknown): boolean {
  const code = codeOf(error)
  if (code !== undefined && TRANSIENT_SQLSTATES.has(code)) return true
  return isConnectionLoss(error)
}
