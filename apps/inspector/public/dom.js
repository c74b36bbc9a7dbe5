// Building DOM from data: text only. No function here takes HTML, and none sets innerHTML,
// outerHTML, insertAdjacentHTML, href or src: text from a session, a schema or a model can
// only ever become a text node or a plain attribute value.
;(() => {
  /** Properties el() sets; anything else (innerHTML, href, on* handlers from data) is refused. */
  const ALLOWED = new Set([
    'className',
    'id',
    'type',
    'name',
    'title',
    'textContent',
    'disabled',
    'hidden',
    'value',
    'placeholder',
    'required',
    'step',
    'min',
    'max',
    'rows',
    'open',
    'htmlFor',
    'checked',
    'selected',
    'noValidate',
    'onclick',
    'onsubmit',
    'oninput',
  ])
  /** An element with text-only children: strings become text nodes. */
  function el(tag, { dataset, ...props } = {}, ...children) {
    const node = document.createElement(tag)
    for (const [key, value] of Object.entries(props)) {
      if (!ALLOWED.has(key)) throw new Error(`el() does not set ${key}`)
      if (value === undefined) continue
      node[key] = key.startsWith('on') || typeof value === 'boolean' ? value : String(value)
    }
    for (const [key, value] of Object.entries(dataset ?? {})) node.dataset[key] = String(value)
    for (const child of children.flat()) {
      if (child == null || child === false) continue
      node.append(typeof child === 'string' ? document.createTextNode(child) : child)
    }
    return node
  }
  window.inspectorDom = { el }
})()
