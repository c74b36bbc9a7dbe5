import type { SecretScanner } from './secret-scanner.js'
import { MESSAGE_STRUCTURE } from './structure.js'

const CLEAN = Symbol('clean')

/** The part of chat()'s config that reaches the model. */
interface ModelInput {
  readonly messages: readonly unknown[]
  readonly providerMessages?: readonly unknown[] | undefined
  readonly systemPrompts?: readonly unknown[]
}

/**
 * Returns what chat() sends to the model with the session's secrets cut out: every
 * message (prompts, tool calls and their arguments, tool results, also results chat()
 * made itself, such as an error for arguments that failed the input schema) and the
 * system prompts. Roles, ids and tool names stay. Undefined when nothing changes.
 *
 * Messages are redacted once each: `cache` (one per chat loop) remembers the copies.
 */
export function redactModelInput(
  scanner: SecretScanner,
  config: ModelInput,
  cache: Map<string, unknown>,
): { providerMessages: unknown[]; systemPrompts: unknown[] } | undefined {
  if (scanner.size === 0) return undefined
  let changed = false
  const redactOne = (message: unknown) => {
    const key = JSON.stringify(message) ?? ''
    let copy = cache.get(key)
    if (copy === undefined) {
      copy = scanner.scanValue(message) === null ? CLEAN : scanner.redact(message, MESSAGE_STRUCTURE)
      cache.set(key, copy)
    }
    if (copy === CLEAN) return message
    changed = true
    return copy
  }
  const providerMessages = (config.providerMessages ?? config.messages).map(redactOne)
  const systemPrompts = (config.systemPrompts ?? []).map((prompt) => {
    const copy = scanner.redact(prompt)
    if (copy !== prompt) changed = true
    return copy
  })
  return changed ? { providerMessages, systemPrompts } : undefined
}
