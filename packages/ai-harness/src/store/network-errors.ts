/**
 * Node's socket and DNS error codes that say "the connection failed or was lost": the
 * request may or may not have reached the database, and another try may work. One set
 * for every store, so a lost network is retried the same way whatever the database.
 */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  // undici's "the socket closed under the request".
  'UND_ERR_SOCKET',
])

/** True for an error whose `code` is one of {@link NETWORK_ERROR_CODES}. */
export function isNetworkError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' && NETWORK_ERROR_CODES.has(code)
}
