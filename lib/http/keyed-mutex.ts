/** Serialises async work per key inside this process: each `run` waits for the one before it. */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>()

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve()
    const current = previous.then(fn, fn)
    const tail = current.catch(() => {})
    this.#tails.set(key, tail)
    try {
      return await current
    } finally {
      // Forget the key once nothing queues behind this run, so the map does not grow forever.
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    }
  }
}
