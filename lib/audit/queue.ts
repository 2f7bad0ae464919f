// The audit trail's write path: events wait in memory and are written in batches (one statement
// each) by one flusher, so a request pays for a push onto an array, never for a database round
// trip. The queue is bounded: while the database cannot take the events (down, or slower than
// they come), it holds at most `maxQueued` of them, counting those being written and the places
// reserved. A request that will act (a write) reserves its event's place before it acts, and its
// event is then always taken; other events (denied requests) are taken only while the queue is
// below `maxUnreserved`, and dropped and counted past it.

export interface AuditQueueOptions<E> {
  /** Events held at most, with those being written and the places reserved. */
  maxQueued: number
  /** Events pushed without a reservation are taken only while the queue holds fewer than this (default maxQueued). */
  maxUnreserved?: number
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
  /** Events not written yet: waiting, or in the batch being written. */
  queued: number
  /** Places reserved by requests that have not pushed their event yet. */
  reserved: number
  written: number
  dropped: number
  writeFailures: number
}

export class AuditQueue<E> {
  readonly #options: AuditQueueOptions<E>
  #events: E[] = []
  /** Events of the batch being written: they come back to the queue when the write fails. */
  #inFlight = 0
  #reserved = 0
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

  /** What the queue holds and has promised: queued, being written, reserved. */
  #held (): number {
    return this.#events.length + this.#inFlight + this.#reserved
  }

  /**
   * Reserves the place of one event to come (pushed later with `reserved`); false when the queue
   * is full (or closed): the caller must not act. A reservation not used is given back (release).
   */
  reserve (): boolean {
    if (this.#closed || this.#held() >= this.#options.maxQueued) return false
    this.#reserved++
    return true
  }

  /** Gives back a reservation whose event will not come. */
  release (): void {
    if (this.#reserved > 0) this.#reserved--
  }

  /**
   * Queues an event: with `reserved`, in the place reserved for it (always taken unless closed);
   * without, only while the queue holds fewer than maxUnreserved. False when it was dropped.
   */
  push (event: E, reserved = false): boolean {
    if (reserved) this.release()
    if (this.#closed || (!reserved && this.#held() >= (this.#options.maxUnreserved ?? this.#options.maxQueued))) {
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
    return { queued: this.#events.length + this.#inFlight, reserved: this.#reserved, written: this.#written, dropped: this.#dropped, writeFailures: this.#writeFailures }
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
      this.#inFlight = batch.length
      try {
        await this.#options.write(batch)
      } catch (err) {
        // Back in front, in order: they held their places while being written, so the queue
        // stays within its bound.
        this.#inFlight = 0
        this.#events = batch.concat(this.#events)
        this.#writeFailures++
        this.#failuresInRow++
        this.#options.onWriteError(err, this.#events.length)
        if (!this.#closed) this.#schedule(Math.min(this.#options.maxRetryMs, this.#options.intervalMs * 2 ** this.#failuresInRow))
        return
      }
      this.#inFlight = 0
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
