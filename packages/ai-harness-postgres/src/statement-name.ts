/**
 * The name a statement is prepared under, from its text: the store's statements embed
 * the schema, so each schema gets its own. Two 32-bit hashes and the length, so two
 * texts never meet under one name in practice.
 */
export function statementName(text: string): string {
  let a = 0x811c9dc5
  let b = 5381
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    a = Math.imul(a ^ unit, 0x01000193)
    b = (Math.imul(b, 33) + unit) | 0
  }
  return `ah_${(a >>> 0).toString(36)}_${(b >>> 0).toString(36)}_${text.length.toString(36)}`
}

/** `statementName`, remembered per text: a store has a fixed set of statements, so this stays small. */
export function statementNamer(): (text: string) => string {
  const names = new Map<string, string>()
  return (text) => {
    let name = names.get(text)
    if (name === undefined) {
      name = statementName(text)
      names.set(text, name)
    }
    return name
  }
}
