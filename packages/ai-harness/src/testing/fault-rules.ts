/** A rule in force: how often it hit, and when it first did. */
export interface RuleHandle<Hit> {
  readonly hits: number
  /** Resolves with the first call or request the rule hit. */
  readonly hit: Promise<Hit>
  /** Takes the rule out. */
  remove(): void
}

interface ActiveRule<Rule, Hit> {
  readonly rule: Rule
  readonly matches: (hit: Hit) => boolean
  skip: number
  left: number
  hits: number
  onHit: (hit: Hit) => void
}

/**
 * Fault rules, tried in the order added: the first whose test matches (after letting
 * `skip` matches through) hits, at most `times` times. Shared by the faulty store and the
 * fault proxy.
 */
export class FaultRules<Rule, Hit> {
  readonly #rules: ActiveRule<Rule, Hit>[] = []

  add(rule: Rule, matches: (hit: Hit) => boolean, options: { times?: number; skip?: number }): RuleHandle<Hit> {
    let onHit: (hit: Hit) => void = () => {}
    const hit = new Promise<Hit>((resolve) => {
      onHit = resolve
    })
    const active: ActiveRule<Rule, Hit> = { rule, matches, skip: options.skip ?? 0, left: options.times ?? 1, hits: 0, onHit }
    this.#rules.push(active)
    return {
      get hits() {
        return active.hits
      },
      hit,
      remove() {
        active.left = 0
      },
    }
  }

  /** The rule that hits `candidate`, if one does; counts the hit. */
  take(candidate: Hit): Rule | undefined {
    for (const active of this.#rules) {
      if (active.left <= 0 || !active.matches(candidate)) continue
      if (active.skip > 0) {
        active.skip--
        continue
      }
      active.left--
      active.hits++
      active.onHit(candidate)
      return active.rule
    }
    return undefined
  }

  /** Takes every rule out. */
  clear(): void {
    for (const active of this.#rules) active.left = 0
  }
}
