/** A seeded random source (SplitMix32): the same seed gives the same numbers on every machine. */
export class SimRandom {
  #state: number

  constructor(readonly seed: number) {
    this.#state = seed >>> 0
  }

  /** A number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x9e3779b9) >>> 0
    let z = this.#state
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return ((z ^ (z >>> 16)) >>> 0) / 4_294_967_296
  }

  /** A whole number in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!
  }

  /** A new source that follows from this one, for a part of the world that must not shift the others' numbers. */
  fork(): SimRandom {
    return new SimRandom(Math.floor(this.next() * 4_294_967_296))
  }
}
