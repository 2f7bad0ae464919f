/** Thrown by `CheckQueue.run` when every slot is busy and the waiting line is full. */
export class QueueFull extends Error {
  constructor () {
    super('Too many password checks are waiting')
    this.name = 'QueueFull'
  }
}

interface Waiter {
  start: () => void
}

/**
 * Runs expensive checks (password hashes) a few at a time, with a bounded line of waiting ones:
 * a flood of logins costs a bounded amount of CPU and memory, and a request that cannot even
 * wait is refused at once (the caller answers 503 with Retry-After) instead of queueing for long.
 * Checks marked `priority` (credentials known to be right) go before the others in the line.
 */
export class CheckQueue {
  readonly #concurrency: number
  readonly #maxWaiting: number
  readonly #priority: Waiter[] = []
  readonly #normal: Waiter[] = []
  #running = 0
  /** Checks started since the queue was made. */
  started = 0

  constructor (options: { concurrency: number, maxWaiting: number }) {
    this.#concurrency = options.concurrency
    this.#maxWaiting = options.maxWaiting
  }

  get running (): number { return this.#running }
  get waiting (): number { return this.#priority.length + this.#normal.length }

  async run<T> (check: () => Promise<T>, options: { priority?: boolean } = {}): Promise<T> {
    if (this.#running >= this.#concurrency) {
      // Known credentials wait in a line of their own (bounded alike): a flood of guesses that fills
      // the other line does not turn them away.
      const line = options.priority === true ? this.#priority : this.#normal
      if (line.length >= this.#maxWaiting) throw new QueueFull()
      await new Promise<void>((resolve) => {
        line.push({ start: resolve })
      })
    } else {
      this.#running++
    }
    this.started++
    try {
      return await check()
    } finally {
      const next = this.#priority.shift() ?? this.#normal.shift()
      // The slot passes straight to the next waiter; without one it is freed.
      if (next !== undefined) next.start()
      else this.#running--
    }
  }
}
