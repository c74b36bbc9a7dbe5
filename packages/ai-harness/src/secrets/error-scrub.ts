import type { SecretScanner } from './secret-scanner.js'

/**
 * Cuts the session's secrets out of an error before it leaves the session: its
 * message, its stack (which repeats the message), the path or step it names, and its causes. The error keeps its
 * class and code, so callers can still match on them. A thrown string is redacted too.
 */
export function scrubError(scanner: SecretScanner, error: unknown, depth = 0): unknown {
  if (scanner.size === 0) return error
  if (typeof error === 'string') return scanner.redactText(error)
  if (typeof error !== 'object' || error === null || depth > 4) return error
  const target = error as { message?: unknown; stack?: unknown; path?: unknown; step?: unknown; cause?: unknown }
  try {
    for (const key of ['message', 'stack', 'path', 'step'] as const) {
      const text = target[key]
      if (typeof text !== 'string') continue
      const redacted = scanner.redactText(text)
      if (redacted !== text) target[key] = redacted
    }
    if (target.cause !== undefined) {
      const cause = scrubError(scanner, target.cause, depth + 1)
      if (cause !== target.cause) target.cause = cause
    }
  } catch {
    // A frozen error cannot be changed; its text is its owner's.
  }
  return error
}
