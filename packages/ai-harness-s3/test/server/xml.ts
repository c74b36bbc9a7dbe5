/** The little XML the test server reads and writes: S3's bodies are flat and known in advance. */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' }

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!)
}

export function unescapeXml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos|#x[0-9a-fA-F]+|#[0-9]+);/g, (_, name: string) => {
    if (name.startsWith('#x')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16))
    if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10))
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[name]!
  })
}

/** `<Tag>value</Tag>` for each defined value, values escaped. */
export function elements(fields: Record<string, string | number | boolean | undefined>): string {
  let out = ''
  for (const [tag, value] of Object.entries(fields)) {
    if (value !== undefined) out += `<${tag}>${escapeXml(String(value))}</${tag}>`
  }
  return out
}

/** Every text of `<tag>…</tag>` in `xml`, unescaped (no nesting of the same tag in S3's request bodies). */
export function textsOf(xml: string, tag: string): string[] {
  const found: string[] = []
  const pattern = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g')
  for (const match of xml.matchAll(pattern)) found.push(unescapeXml(match[1]!))
  return found
}

export const XML_HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n'
export const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/'
