// Response times of a load run, for its percentiles.

/** Response times in milliseconds, kept whole for exact percentiles. */
export class Latencies {
  #values = new Float64Array(1 << 16)
  #size = 0

  add (ms: number): void {
    if (this.#size === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2)
      grown.set(this.#values)
      this.#values = grown
    }
    this.#values[this.#size++] = ms
  }

  /** The smallest value that `p` percent of the values do not exceed (nearest rank); 0 when empty. */
  percentile (p: number): number {
    if (this.#size === 0) return 0
    const sorted = this.#values.slice(0, this.#size).sort()
    const rank = Math.min(this.#size, Math.max(1, Math.ceil(p / 100 * this.#size)))
    return Number((sorted[rank - 1] ?? 0).toFixed(3))
  }
}
