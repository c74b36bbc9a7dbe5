import { asciiLower, isBase64Char, type Needle } from './secret-forms.js'
import { indexesOf, type SecretNeedles, type Span } from './secret-needles.js'
import { pendingEscapeAt, ViewPositions } from './text-views.js'

/**
 * For a text that grows (a streamed message): the length of the prefix that is final,
 * that no later characters can turn into part of a secret. Everything from there on may
 * be the start of a secret (or of an escape that would decode to one) and must be held
 * back until more text arrives or the text ends.
 */
export function settledLength(needles: SecretNeedles, text: string): number {
  if (needles.all.length === 0) return text.length
  const views = needles.views(text)
  const positions = new ViewPositions(text)
  // A text may end in an escape that is not complete yet (`\u00`, `%C3`, `&#x4`): held back, and
  // it may decode to the next character of a needle, so every view is also matched up to it.
  let pendingFrom = text.length
  for (const view of views) {
    const pending = pendingEscapeAt(view.text)
    if (pending !== -1) pendingFrom = Math.min(pendingFrom, positions.start(view, pending))
  }
  let hold = pendingFrom
  const spans: Span[] = []
  // Only the end of a view matters: a partial match is shorter than its needle, and a whole
  // match that a hold could cut through overlaps the last needle's length of the text.
  const tail = needles.longest
  for (const view of views) {
    const t = view.text
    let cutAt = t.length
    if (pendingFrom < text.length) while (cutAt > 0 && positions.start(view, cutAt - 1) >= pendingFrom) cutAt--
    const ends = cutAt === t.length ? [t.length] : [t.length, cutAt]
    const from = Math.max(0, t.length - 2 * tail - 8)
    // Hex ignores case: lower-case only the end that is looked at.
    const lowerFrom = Math.max(0, Math.min(from, cutAt - tail + 1))
    const lowered = asciiLower(t.slice(lowerFrom))
    const haystackOf = (needle: Needle) => (needle.caseless ? { text: lowered, offset: lowerFrom } : { text: t, offset: 0 })
    const widen = (at: number, needle: Needle) => {
      let start = at
      for (let k = 0; k < needle.spill && isBase64Char(t[start - 1]); k++) start--
      return start
    }
    // A partial match at an end: the text there ends with a needle's beginning.
    for (const end of ends) {
      for (let at = Math.max(0, end - tail + 1); at < end; at++) {
        for (const needle of needles.startingWith(t[at] as string, lowered[at - lowerFrom] as string)) {
          const { text: haystack, offset } = haystackOf(needle)
          if (needle.text.length <= end - at || !needle.text.startsWith(haystack.slice(at - offset, end - offset))) continue
          hold = Math.min(hold, positions.start(view, widen(at, needle)))
        }
      }
    }
    // Whole matches near the end: one whose widened cut may still grow holds the text back.
    for (const needle of needles.all) {
      const { text: haystack, offset } = haystackOf(needle)
      for (const found of indexesOf(haystack, needle.text, Math.max(0, from - offset))) {
        const at = found + offset
        const start = widen(at, needle)
        const matchEnd = at + needle.text.length
        if (needle.spill > 0 && matchEnd + needle.spill + 2 >= t.length) hold = Math.min(hold, positions.start(view, start))
        else spans.push({ start: positions.start(view, start), end: positions.end(view, matchEnd) })
      }
    }
  }
  return outsideWholeMatches(hold, spans)
}

/** Moves a hold back to the start of any whole match it would cut through. */
function outsideWholeMatches(hold: number, spans: readonly Span[]): number {
  for (let changed = true; changed; ) {
    changed = false
    for (const span of spans) {
      if (span.start < hold && span.end > hold) {
        hold = span.start
        changed = true
      }
    }
  }
  return hold
}
