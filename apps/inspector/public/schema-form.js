// A form from a question's JSON Schema, built with text nodes only (see dom.js). It covers
// the subset step.ask schemas use: objects of strings, numbers, integers, booleans, enums,
// nested objects and arrays; anything else is a JSON text field. Nothing is pre-filled: a
// field left empty is left out of the answer, so the server (the judge) says what is missing.
// Schema text (title, description, default, examples) is shown as text; links are ignored.
;(() => {
  const { el } = window.inspectorDom
  const typeOf = (schema) => {
    const type = Array.isArray(schema?.type) ? schema.type.find((t) => t !== 'null') : schema?.type
    if (Array.isArray(schema?.enum)) return 'enum'
    if (type === 'object' && schema.properties && typeof schema.properties === 'object') return 'object'
    if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') return type
    return 'json'
  }
  const text = (value) => (typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value))
  let counter = 0

  /** A field for `schema` named `path`; returns { node, read() } where read() gives the value or undefined (empty). */
  function field(schema, path, label, required) {
    const kind = typeOf(schema)
    const id = `f${++counter}`
    const hints = [
      schema && typeof schema.description === 'string' ? el('div', { className: 'muted hint' }, schema.description) : null,
      schema && 'default' in schema ? el('div', { className: 'muted hint' }, `default: ${text(schema.default)}`) : null,
    ]
    const caption = el(
      'label',
      { htmlFor: id },
      text(schema?.title ?? label),
      required ? el('span', { className: 'required', title: 'required' }, ' *') : null,
    )
    if (kind === 'object') {
      const need = new Set(Array.isArray(schema.required) ? schema.required.map(String) : [])
      const parts = Object.entries(schema.properties).map(([key, inner]) => [key, field(inner, `${path}[${key}]`, key, need.has(key))])
      const node = el(
        'fieldset',
        { className: 'object', dataset: { path } },
        path === 'root' ? null : el('legend', {}, text(schema.title ?? label)),
        ...hints,
        ...parts.map(([, part]) => part.node),
      )
      return {
        node,
        read() {
          const out = {}
          for (const [key, part] of parts) {
            const value = part.read()
            if (value !== undefined) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
          }
          return Object.keys(out).length === 0 && path !== 'root' && !required ? undefined : out
        },
      }
    }
    let input
    let read
    if (kind === 'enum' || kind === 'boolean') {
      const options = kind === 'boolean' ? [true, false] : schema.enum
      input = el(
        'select',
        { id, name: path },
        el('option', { value: '' }, '— choose —'),
        ...options.map((option, i) =>
          el('option', { value: String(i) }, kind === 'boolean' ? (option ? 'yes (true)' : 'no (false)') : text(option)),
        ),
      )
      read = () => (input.value === '' ? undefined : options[Number(input.value)])
    } else if (kind === 'number' || kind === 'integer') {
      input = el('input', {
        id,
        name: path,
        type: 'number',
        step: kind === 'integer' ? '1' : 'any',
        min: typeof schema.minimum === 'number' ? schema.minimum : undefined,
        max: typeof schema.maximum === 'number' ? schema.maximum : undefined,
      })
      read = () => (input.value.trim() === '' ? undefined : Number(input.value))
    } else if (kind === 'string') {
      input = el('input', { id, name: path, type: 'text' })
      read = () => (input.value === '' ? undefined : input.value)
    } else {
      input = el('textarea', { id, name: path, rows: 3, placeholder: 'JSON' })
      read = () => {
        if (input.value.trim() === '') return undefined
        try {
          return JSON.parse(input.value)
        } catch {
          throw new Error(`${label}: not valid JSON`)
        }
      }
    }
    return { node: el('div', { className: 'field', dataset: { path } }, caption, input, ...hints), read }
  }

  /** The form's fields for a question schema: { node, read() } where read() gives the answer to send. */
  function schemaForm(schema) {
    const root = field(schema, 'root', '', true)
    return { node: root.node, read: () => root.read() }
  }
  window.inspectorSchemaForm = { schemaForm }
})()
