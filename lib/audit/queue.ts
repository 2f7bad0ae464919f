// The audit trail's write path: events wait in memory and are written in batches (one statement
// each) by one flusher, so a request pays for a push onto an array, never for a database round
// trip. The queue is bounded: while the database cannot take the events (down, or slower than
// they come), those past the bound are dropped and counted rather than held without limit.

export interface AuditQueueOptions<E> {
  /** Events held at most; a push past it drops the event. */
  maxQueued: number
  /** Events written by one statement at most. */
  batchSize: number
  /** A batch is written this long after its first event, unless full earlier. */
  intervalMs: number
  /** After a failed write the next waits this long at most (doubling from intervalMs). */
  maxRetryMs: number
  /** Writes one batch (throws when it could not). */
  write: (events: E[]) => Promise<void>
  /** A write failed; its events stay queued. */
  onWriteError: (err: unknown, queued: number) => void
}

export interface AuditQueueState {
  queued: number
  written: number
  dropped: number
  writeFailures: number
}

export class AuditQueue<E> {
  readonly #options: AuditQueueOptions<E>
  #events: E[] = []
  #written = 0
  #dropped = 0
  #writeFailures = 0
  #failuresInRow = 0
  #timer: NodeJS.Timeout | undefined
  #flushing: Promise<void> | undefined
  #closed = false

  constructor (options: AuditQueueOptions<E>) {
    this.#options = options
  }

  /** Queues an event; false when the queue was full (or closed) and the event was dropped. */
  push (event: E): boolean {
    if (this.#closed || this.#events.length >= this.#options.maxQueued) {
      this.#dropped++
      return false
    }
    this.#events.push(event)
    // A running flush takes this event too; after a failure the retry's timer is already set.
    if (this.#flushing !== undefined) return true
    if (this.#events.length >= this.#options.batchSize && this.#failuresInRow === 0) void this.flush()
    else this.#schedule(this.#options.intervalMs)
    return true
  }

  state (): AuditQueueState {
    return { queued: this.#events.length, written: this.#written, dropped: this.#dropped, writeFailures: this.#writeFailures }
  }

  /**
   * Writes what is queued, a batch at a time, until the queue is empty or a write fails (the
   * events stay queued; the next attempt waits longer after each failure). One flush at a time:
   * a call during one waits for it and goes on.
   */
  async flush (): Promise<void> {
    while (this.#flushing !== undefined) await this.#flushing
    // The flush waited for failed: its retry waits its turn (close() always tries once more).
    if (this.#events.length === 0 || (this.#failuresInRow > 0 && !this.#closed && this.#timer !== undefined)) return
    this.#flushing = this.#drain().finally(() => { this.#flushing = undefined })
    await this.#flushing
  }

  /** No event is taken from now on; writes what is queued (one attempt) and says how many were lost. */
  async close (): Promise<{ lost: number }> {
    this.#closed = true
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#failuresInRow = 0
    await this.flush()
    const lost = this.#events.length
    this.#dropped += lost
    this.#events = []
    return { lost }
  }

  async #drain (): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    while (this.#events.length > 0) {
      const batch = this.#events.splice(0, this.#options.batchSize)
      try {
        await this.#options.write(batch)
      } catch (err) {
        // Back in front, in order; the events that came meanwhile may push the total past the
        // bound: the newest of them go.
        this.#events = batch.concat(this.#events)
        const excess = this.#events.length - this.#options.maxQueued
        if (excess > 0) {
          this.#events.length = this.#options.maxQueued
          this.#dropped += excess
        }
        this.#writeFailures++
        this.#failuresInRow++
        this.#options.onWriteError(err, this.#events.length)
        if (!this.#closed) this.#schedule(Math.min(this.#options.maxRetryMs, this.#options.intervalMs * 2 ** this.#failuresInRow))
        return
      }
      this.#written += batch.length
      this.#failuresInRow = 0
    }
  }

  #schedule (delayMs: number): void {
    if (this.#timer !== undefined || this.#closed) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      void this.flush()
    }, delayMs)
    // A pending batch never keeps the process alive: close() writes it.
    this.#timer.unref()
  }
}
