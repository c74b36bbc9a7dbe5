import { HarnessError } from '../contract/errors.js'
import type { Harness } from '../runtime/harness.js'
import { MIN_SECRET_LENGTH, SecretScanner } from './secret-scanner.js'
import { FIXED_STRUCTURE } from './structure.js'

/** The record that keeps the name (never the value) of a secret a tool read. */
export const SECRET_USED_RECORD = 'harness.secret.used'

/** A value the harness writes as structure, and how to name it without printing it. */
interface StructuralValue {
  readonly what: string
  readonly text: string
}

export interface SessionSecretsArgs {
  readonly harness: Harness
  readonly sessionId: string
  readonly hostId: string
  /** The secrets given to `host.open`, by name. */
  readonly given: Readonly<Record<string, string>>
  /** Names of secrets tools of this session read before (from the log). */
  readonly usedBefore: Iterable<string>
  readonly parent: { readonly sessionId: string; readonly toolCallId: string } | null
}

/**
 * The secrets of one session: the ones given when it opened, the ones its harness
 * lists in `secretNames`, and every one a tool of the session ever read (their names
 * are in the log, so a session opened again, by any host or worker, knows them again
 * through `resolveSecret` before the model can repeat one). Each is checked when it
 * joins: long enough, and in no id, name or field the harness writes as structure.
 */
export class SessionSecrets {
  readonly scanner = new SecretScanner()
  readonly #given: Map<string, string>
  readonly #used: Set<string>
  readonly #structure: StructuralValue[]
  readonly #structureText: string
  readonly #harness: Harness

  private constructor(args: SessionSecretsArgs) {
    this.#harness = args.harness
    this.#given = new Map(Object.entries(args.given ?? {}))
    this.#used = new Set(args.usedBefore)
    this.#structure = structuralValues(args)
    this.#structureText = this.#structure.map((s) => s.text).join('\u0000')
  }

  /** Builds the session's secrets; throws SECRET_TOO_SHORT, SECRET_NOT_FOUND or SECRET_AMBIGUOUS. */
  static async open(args: SessionSecretsArgs): Promise<SessionSecrets> {
    const secrets = new SessionSecrets(args)
    for (const [name, value] of secrets.#given) secrets.#admit(name, value)
    const listed = args.harness.options.secretNames ?? []
    if (!Array.isArray(listed) || listed.some((name) => typeof name !== 'string' || name === '')) {
      throw new HarnessError('INVALID_ARGUMENT', 'defineHarness({ secretNames }) takes an array of secret names, e.g. ["stripeKey"].')
    }
    for (const name of new Set([...listed, ...secrets.#used])) {
      if (secrets.#given.has(name)) continue
      const why = secrets.#used.has(name) ? 'a tool of this session read it before' : "it is listed in the harness's secretNames"
      secrets.#admit(name, await secrets.#resolve(name, why))
    }
    return secrets
  }

  /**
   * Reads a secret for a tool: the value given at open, else the harness's
   * `resolveSecret`. `firstUse` is true when its name is not in the log yet: the caller
   * logs it (SECRET_USED_RECORD) before the tool gets the value.
   */
  async read(name: string): Promise<{ value: string; firstUse: boolean }> {
    if (typeof name !== 'string' || name === '') {
      throw new HarnessError('INVALID_ARGUMENT', 'secret(name) takes the name of a secret, e.g. secret("stripeKey").')
    }
    const value = this.#given.get(name) ?? (await this.#resolve(name, 'a tool asked for it'))
    this.#admit(name, value)
    return { value, firstUse: !this.#used.has(name) }
  }

  /** Notes that the log now holds the name. */
  markUsed(name: string): void {
    this.#used.add(name)
  }

  async #resolve(name: string, why: string): Promise<string> {
    const value = await this.#harness.options.resolveSecret?.(name)
    if (typeof value !== 'string') {
      throw new HarnessError(
        'SECRET_NOT_FOUND',
        `No secret named ${JSON.stringify(name)}, and ${why}. Give it when the session opens (host.open({ secrets: { ${JSON.stringify(name)}: ... } })) or return it from the harness's resolveSecret, so every host and worker that opens the session knows it.`,
      )
    }
    return value
  }

  #admit(name: string, value: string): void {
    if (this.scanner.has(value)) return
    if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) {
      throw new HarnessError(
        'SECRET_TOO_SHORT',
        `Secret ${JSON.stringify(name)} must be a string of at least ${MIN_SECRET_LENGTH} characters; shorter ones cannot be told apart from ordinary text.`,
      )
    }
    const alone = new SecretScanner([value])
    // One scan of all the structure at once; NUL is no part of any encoding, so nothing matches across two values.
    const clash = alone.scanText(this.#structureText) === null ? undefined : this.#structure.find((s) => alone.scanText(s.text) !== null)
    if (clash) {
      throw new HarnessError(
        'SECRET_AMBIGUOUS',
        `Secret ${JSON.stringify(name)} occurs in ${clash.what}, which the harness writes as is into the log and the stream (ids, names and types are never cut, or clients could not follow them). Use a secret that is no ordinary word or id: a real key or token.`,
      )
    }
    this.scanner.add(value)
  }
}

/**
 * The secrets of a session that a host which does not drive it can know: those its
 * harness lists in `secretNames` and those its tools read (names from the log), as far
 * as `resolveSecret` gives them. `host.answer` refuses an answer that holds one.
 */
export async function resolvableSecrets(harness: Harness | undefined, usedBefore: Iterable<string>): Promise<SecretScanner> {
  const scanner = new SecretScanner()
  if (!harness?.options.resolveSecret) return scanner
  for (const name of new Set([...(harness.options.secretNames ?? []), ...usedBefore])) {
    const value = await harness.options.resolveSecret(name)
    if (typeof value === 'string' && value.length >= MIN_SECRET_LENGTH) scanner.add(value)
  }
  return scanner
}

/** The structure a session writes that is known when it opens. */
function structuralValues(args: SessionSecretsArgs): StructuralValue[] {
  const { harness } = args
  const values: StructuralValue[] = [
    { what: 'the session id', text: args.sessionId },
    { what: 'the host id', text: args.hostId },
    { what: 'the harness name', text: harness.name },
    { what: "the adapter's model name", text: typeof harness.options.adapter?.model === 'string' ? harness.options.adapter.model : '' },
    ...harness.tools.map((tool) => ({ what: 'a tool name', text: tool.name })),
    ...FIXED_STRUCTURE.map((text) => ({ what: 'a field, record type or event type the harness writes', text })),
  ]
  if (args.parent) {
    values.push(
      { what: 'the parent session id', text: args.parent.sessionId },
      { what: 'the parent tool call id', text: args.parent.toolCallId },
    )
  }
  return values.filter((v) => typeof v.text === 'string' && v.text.length >= MIN_SECRET_LENGTH)
}
