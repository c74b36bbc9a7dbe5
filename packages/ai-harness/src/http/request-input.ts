import { Refusal } from './responses.js'

/** Reads a JSON body of at most `maxBytes`; refuses another content type (so a cross-site form cannot post one without a preflight). */
export async function readBody(request: Request, maxBytes: number): Promise<unknown> {
  const type = request.headers.get('content-type') ?? ''
  if (!/^application\/json\b/i.test(type)) {
    throw new Refusal('BODY_INVALID', `Send the body as JSON with content-type application/json, not ${JSON.stringify(type || 'none')}.`)
  }
  const declared = Number(request.headers.get('content-length') ?? '0')
  if (declared > maxBytes) throw new Refusal('BODY_TOO_LARGE', `The body is over ${maxBytes} bytes.`)
  const text = await readText(request, maxBytes)
  try {
    return JSON.parse(text)
  } catch {
    throw new Refusal('BODY_INVALID', 'The body is not valid JSON.')
  }
}

/** Reads at most `maxBytes` of the body, refusing more without buffering it. */
async function readText(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return ''
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => {})
      throw new Refusal('BODY_TOO_LARGE', `The body is over ${maxBytes} bytes.`)
    }
    chunks.push(value)
  }
  const all = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    all.set(chunk, at)
    at += chunk.byteLength
  }
  return new TextDecoder().decode(all)
}

export type FieldType = 'string' | 'string?' | 'boolean' | 'any'

/**
 * The named fields of a JSON object body, each checked; an unknown field is refused too.
 * Only the spec's own keys count: `__proto__` or `constructor` (which every object
 * inherits) is as unknown as any other name.
 */
export function fields(body: unknown, spec: Record<string, FieldType>): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Refusal('BODY_INVALID', `The body must be a JSON object with ${Object.keys(spec).join(', ')}.`)
  }
  const record = body as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (!Object.hasOwn(spec, key))
      throw new Refusal('BODY_INVALID', `Unknown field ${JSON.stringify(key)}; the body takes ${Object.keys(spec).join(', ')}.`)
  }
  for (const [key, type] of Object.entries(spec)) {
    const value = Object.hasOwn(record, key) ? record[key] : undefined
    const ok =
      type === 'any'
        ? Object.hasOwn(record, key)
        : type === 'string?'
          ? value === undefined || typeof value === 'string'
          : typeof value === type
    if (!ok) throw new Refusal('BODY_INVALID', `Field ${key} must be ${type === 'any' ? 'present' : `a ${type.replace('?', '')}`}.`)
  }
  return record
}

/** A whole-number query parameter from 0 to `max`, or `fallback` when it is absent. */
export function numberParam(params: URLSearchParams, name: string, fallback: number, max: number): number {
  const raw = params.get(name)
  if (raw === null || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new Refusal('INVALID_ARGUMENT', `Query parameter ${name} must be a whole number from 0 to ${max}, not ${JSON.stringify(raw)}.`)
  }
  return value
}
