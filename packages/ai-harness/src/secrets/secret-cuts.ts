import type { Span } from './secret-needles.js'

/** The text that replaces a secret in tool results and events. */
export const SECRET_MARKER = '[secret]'

/** Which keys of an object hold structure that redaction must not cut (see `SecretScanner.redact`). */
export interface KeepStructure {
  /** Keys whose string, number or boolean values are structure. Other keys are not redacted either. */
  readonly keys?: ReadonlySet<string>
  /** How to treat the object under a key. */
  readonly nested?: Readonly<Record<string, KeepStructure>>
  /** How to treat the items of an array. */
  readonly items?: KeepStructure
  /** Apply the same rule at every depth. */
  readonly deep?: boolean
}

/** What cutting a value needs of the scanner: how a text or a value holds a secret, and a text's cut. */
export interface TextCutter {
  scanText(text: string): string | null
  scanValue(value: unknown): string | null
  redactText(text: string): string
}

/**
 * A copy of a JSON-like value with the secrets of its strings, keys and numbers cut
 * (see `SecretScanner.redact`); values under `keep`'s keys stay as they are.
 */
export function redactNode(scanner: TextCutter, value: unknown, keep: KeepStructure | undefined): unknown {
  if (typeof value === 'string') return scanner.redactText(value)
  if (typeof value === 'number') return scanner.scanValue(value) === null ? value : SECRET_MARKER
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map((item) => redactNode(scanner, item, keep?.items))
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    if (keep?.keys?.has(key) && (typeof inner !== 'object' || inner === null)) {
      out[key] = inner
      continue
    }
    const nested = keep?.nested?.[key] ?? (keep?.deep ? keep : undefined)
    out[keep?.keys ? key : scanner.redactText(key)] = redactNode(scanner, inner, nested)
  }
  return out
}

/** A copy of `node` with the node at the path `path` (made by `childPath`) replaced by the marker; at `<key>`, keys holding a secret are renamed. */
export function replaceAt(scanner: TextCutter, node: unknown, path: string): unknown {
  return replaceAtKeys(scanner, node, parsePath(path), 0)
}

function replaceAtKeys(scanner: TextCutter, node: unknown, keys: ReadonlyArray<string | number>, depth: number): unknown {
  if (depth === keys.length) return SECRET_MARKER
  const key = keys[depth]!
  if (Array.isArray(node)) return node.map((item, i) => (i === key ? replaceAtKeys(scanner, item, keys, depth + 1) : item))
  if (typeof node !== 'object' || node === null) return SECRET_MARKER
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(node)) {
    if (key === '<key>') out[scanner.scanText(JSON.stringify(k)) === null ? k : SECRET_MARKER] = v
    else out[k] = k === key ? replaceAtKeys(scanner, v, keys, depth + 1) : v
  }
  return out
}

/** Parses a path made by `childPath` back into keys. */
function parsePath(path: string): Array<string | number> {
  const keys: Array<string | number> = []
  const first = path.search(/[.[]/)
  if (first === -1) return keys
  const pattern = /\.([A-Za-z_$][A-Za-z0-9_$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g
  for (const match of path.slice(first).matchAll(pattern)) {
    if (match[1] !== undefined) keys.push(match[1])
    else if (match[2] !== undefined) keys.push(Number(match[2]))
    else keys.push(JSON.parse(match[3]!) as string)
  }
  return keys
}

/**
 * Whether position `index` of a JSON-like text is inside a string literal, starting
 * from `inString` at position `from`. Used to write the marker as a JSON string when
 * it replaces a number, so JSON text stays JSON.
 */
export function insideJsonString(text: string, index: number, from = 0, inString = false): boolean {
  let escaped = false
  for (let i = from; i < index; i++) {
    const c = text[i]
    if (escaped) escaped = false
    else if (c === '\\') escaped = inString
    else if (c === '"') inString = !inString
  }
  return inString
}

/** Replaces `spans` of `text` by the marker; in JSON text, quoted where it stands outside a string. */
export function cut(text: string, spans: readonly Span[], json: { inString: boolean } | undefined): string {
  let out = ''
  let last = 0
  let state = json?.inString ?? false
  for (const { start, end } of spans) {
    if (json) state = insideJsonString(text, start, last, state)
    out += text.slice(last, start) + (json && !state ? JSON.stringify(SECRET_MARKER) : SECRET_MARKER)
    if (json) state = insideJsonString(text, end, start, state)
    last = end
  }
  return out + text.slice(last)
}
