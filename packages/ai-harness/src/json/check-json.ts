/** Why a value is not JSON, and where. `path` is like `$.items[2].at`. */
export interface NonJsonFinding {
  readonly path: string
  readonly reason: string
}

/** Appends a property to a JSON path, quoting keys that are not identifiers. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined'
  if (typeof value === 'bigint') return 'a BigInt'
  if (typeof value === 'symbol') return 'a symbol'
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'number') return String(value)
  const ctor = (value as object).constructor
  return ctor && typeof ctor.name === 'string' && ctor.name !== '' ? `a ${ctor.name}` : 'an object without a plain prototype'
}

function hint(value: unknown): string {
  if (value instanceof Date) return 'return date.toISOString() instead'
  if (value instanceof Map) return 'return Object.fromEntries(map) instead'
  if (value instanceof Set) return 'return [...set] instead'
  if (typeof value === 'bigint') return 'return bigint.toString() instead'
  if (typeof value === 'number') return 'return a finite number or null instead'
  if (value === undefined) return 'use null inside arrays'
  return 'return plain objects, arrays, strings, finite numbers, booleans or null'
}

/**
 * Finds the first place where `value` is not JSON that survives a round trip unchanged.
 * Refuses: `undefined` at the top (unless allowed) or inside arrays, `NaN`/`Infinity`,
 * `BigInt`, functions, symbols, cycles, and objects whose prototype is not
 * `Object.prototype` or `null` (`Date`, `Map`, `Set`, class instances, typed arrays).
 * `undefined` object properties are allowed: JSON drops them, as `JSON.stringify` does.
 */
export function findNonJson(value: unknown, options: { allowUndefinedAtTop?: boolean; root?: string } = {}): NonJsonFinding | null {
  // Most values are small plain trees: a walk that allocates nothing says so; anything
  // else (a fault, a deep or cyclic value) takes the full walk, which finds the fault's path.
  if (value === undefined ? options.allowUndefinedAtTop === true : plainTree(value, 0)) return null
  const found = new NonJsonWalk(options.allowUndefinedAtTop === true).walk(value, 'top')
  if (!found) return null
  // The path is built only for a finding: the walk of a good value makes no strings.
  let path = options.root ?? '$'
  for (let i = found.keys.length - 1; i >= 0; i--) path = childPath(path, found.keys[i]!)
  return { path, reason: found.reason }
}

/**
 * True when `v` is JSON that survives a round trip: the same rules as `NonJsonWalk` (an
 * `undefined` passes only as an object's property), without a path. A cycle is never
 * taken for a tree: past `SHALLOW` levels this gives up and the full walk decides.
 */
function plainTree(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(v)
    case 'object':
      break
    default:
      return false
  }
  if (v === null) return true
  if (depth >= SHALLOW) return false
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!plainTree(v[i], depth + 1)) return false
    return true
  }
  const proto = Object.getPrototypeOf(v)
  if (proto !== Object.prototype && proto !== null) return false
  for (const key of Object.keys(v)) {
    const child = (v as Record<string, unknown>)[key]
    if (child !== undefined && !plainTree(child, depth + 1)) return false
  }
  return true
}

/** A finding on its way up: the keys from it to the root, innermost first. */
interface Found {
  readonly keys: Array<string | number>
  readonly reason: string
}

/** How deep a walk goes with a plain array for its path before it keeps a set too. */
const SHALLOW = 32

class NonJsonWalk {
  /** The objects on the path from the root: a value met again on it is a cycle. */
  readonly #path: object[] = []
  /** The same objects as a set, once the path is deep (most values never are: no set then). */
  #deep: Set<object> | undefined

  constructor(private readonly allowUndefinedAtTop: boolean) {}

  walk(v: unknown, where: 'top' | 'array' | 'object'): Found | null {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return null
      case 'number':
        return Number.isFinite(v) ? null : { keys: [], reason: `${describe(v)} is not JSON; ${hint(v)}` }
      case 'undefined':
        if (where === 'object' || (where === 'top' && this.allowUndefinedAtTop)) return null
        return { keys: [], reason: `undefined is not JSON; ${hint(v)}` }
      case 'bigint':
      case 'symbol':
      case 'function':
        return { keys: [], reason: `${describe(v)} is not JSON; ${hint(v)}` }
    }
    if (v === null) return null
    const obj = v as object
    if (this.#onPath(obj)) return { keys: [], reason: 'a cycle is not JSON; return a tree of plain values' }
    if (Array.isArray(obj)) return this.#children(obj, obj.keys(), 'array')
    const proto = Object.getPrototypeOf(obj)
    if (proto !== Object.prototype && proto !== null) return { keys: [], reason: `${describe(obj)} is not JSON; ${hint(obj)}` }
    return this.#children(obj, Object.keys(obj), 'object')
  }

  #onPath(obj: object): boolean {
    return this.#deep ? this.#deep.has(obj) : this.#path.includes(obj)
  }

  #children(obj: object, keys: Iterable<string | number>, where: 'array' | 'object'): Found | null {
    this.#path.push(obj)
    if (this.#deep) this.#deep.add(obj)
    else if (this.#path.length > SHALLOW) this.#deep = new Set(this.#path)
    for (const key of keys) {
      const found = this.walk((obj as Record<string | number, unknown>)[key], where)
      if (found) {
        found.keys.push(key)
        return found
      }
    }
    this.#path.pop()
    this.#deep?.delete(obj)
    return null
  }
}

/** The value a later run reads back: `JSON.parse(JSON.stringify(value))`. `undefined` stays `undefined`. */
export function jsonCopy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T)
}

/** Size of the value as UTF-8 JSON, the unit of every store limit. */
export function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value) ?? '')
}

/** Node's `Buffer.byteLength`, where there is one: native, and it counts as the loop below does. */
const nativeByteLength = (globalThis as { Buffer?: { byteLength(text: string, encoding: 'utf8'): number } }).Buffer?.byteLength

/**
 * UTF-8 length of a string without allocating its bytes. A lone surrogate counts 3 bytes,
 * the U+FFFD an encoder writes for it.
 */
export function utf8Length(text: string): number {
  if (nativeByteLength) return nativeByteLength(text, 'utf8')
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}

/** Deep equality of two JSON values, ignoring key order. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const other = b as unknown[]
    return a.length === other.length && a.every((item, i) => jsonEqual(item, other[i]))
  }
  const keysA = Object.keys(a)
  const keysB = Object.keys(b)
  return keysA.length === keysB.length && keysA.every((key) => Object.hasOwn(b, key) && jsonEqual((a as never)[key], (b as never)[key]))
}
