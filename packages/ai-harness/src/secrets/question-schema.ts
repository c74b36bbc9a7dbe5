import { childPath } from '../json/check-json.js'
import type { SecretScanner } from './secret-scanner.js'

/**
 * The JSON Schema of a question is logged and shown to the person who answers. Its
 * annotations are text for people: a secret in them is cut out. Everything else
 * decides which answers are valid (property names, `enum`, `const`, `pattern`,
 * `required`, `format`…): cutting a secret out there would change what the question
 * accepts, so such a schema is refused.
 */

/** Keywords whose values are text for people, never read when an answer is checked. */
const ANNOTATIONS = new Set(['title', 'description', '$comment', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly'])
/** Keywords whose value is a schema. */
const SUBSCHEMA = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
])
/** Keywords whose value is a list of schemas. */
const SUBSCHEMA_LIST = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items'])
/** Keywords whose value maps names (structure) to schemas. */
const SUBSCHEMA_MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])

/** The schema with secrets cut out of its annotations, or where a secret sits in its structure. */
export type SchemaRedaction = { readonly schema: unknown } | { readonly refusedAt: string }

export function redactQuestionSchema(scanner: SecretScanner, schema: unknown): SchemaRedaction {
  if (scanner.scanValue(schema) === null) return { schema }
  let refusedAt: string | undefined
  const refuse = (path: string) => {
    refusedAt ??= path
  }
  const walk = (node: unknown, path: string): unknown => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      // A boolean schema, or a value that is not a schema at all: structure.
      if (scanner.scanValue(node) !== null) refuse(path)
      return node
    }
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) {
      const at = childPath(path, key)
      if (scanner.scanText(key) !== null) refuse(childPath(path, '<key>'))
      if (ANNOTATIONS.has(key)) out[key] = scanner.redact(value)
      else if (SUBSCHEMA_LIST.has(key) && Array.isArray(value)) out[key] = value.map((item, i) => walk(item, childPath(at, i)))
      else if (SUBSCHEMA.has(key)) out[key] = walk(value, at)
      else if (SUBSCHEMA_MAP.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const map: Record<string, unknown> = {}
        for (const [name, inner] of Object.entries(value)) {
          if (scanner.scanText(name) !== null) refuse(childPath(at, '<key>'))
          map[name] = walk(inner, childPath(at, name))
        }
        out[key] = map
      } else {
        if (scanner.scanValue(value) !== null) refuse(at)
        out[key] = value
      }
    }
    return out
  }
  const schemaOut = walk(schema, '$')
  if (refusedAt !== undefined) return { refusedAt }
  // Whatever the walk missed (a secret spanning two keywords) is refused, not logged.
  const left = scanner.find(schemaOut)
  return left ? { refusedAt: left.path } : { schema: schemaOut }
}
