// The admission of relayed calls to one adapter: at most as many running as its pool has sockets,
// the rest waiting in a bounded line for a bounded time. The adapter's timeoutMs then bounds only
// the orchestrator's answer, never the wait for a free socket (docs/orchestrator.md).

export interface CallQueueOptions {
  /** Calls running at once (the pool's sockets). */
  slots: number
  /** Calls that may wait for a slot; one more is refused at once. */
  maxWaiting: number
  /** How long a call may wait for a slot. */
  maxWaitMs: number
}

/** Why a call was not admitted. */
export type Refusal = 'full' | 'waited'

/** What a caller holds while its call runs: `release` once it is over (idempotent). */
export type Release = () => void

interface Waiter {
  admit: (release: Release) => void
  refuse: (why: Refusal) => void
  timer: NodeJS.Timeout
}

export class CallQueueRefusal extends Error {
  constructor (readonly reason: Refusal) {
    super(reason === 'full' ? 'the queue is full' : 'waited too long for a free connection')
    this.name = 'CallQueueRefusal'
  }
}

/** A counting semaphore with a bounded, timed FIFO line. */
export class CallQueue {
  #running = 0
  readonly #waiting: Waiter[] = []

  constructor (private readonly options: CallQueueOptions) {}

  /** Calls running. */
  get running (): number { return this.#running }
  /** Calls waiting for a slot. */
  get waiting (): number { return this.#waiting.length }

  /** Resolves with a slot's release; rejects with a CallQueueRefusal when the line is full or the wait too long. */
  async acquire (): Promise<Release> {
    if (this.#running < this.options.slots && this.#waiting.length === 0) return this.#take()
    if (this.#waiting.length >= this.options.maxWaiting) throw new CallQueueRefusal('full')
    return await new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        admit: resolve,
        refuse: (why) => { reject(new CallQueueRefusal(why)) },
        timer: setTimeout(() => {
          const at = this.#waiting.indexOf(waiter)
          /* c8 ignore next -- a waiter leaves the line either way, never twice */
          if (at !== -1) this.#waiting.splice(at, 1)
          waiter.refuse('waited')
        }, this.options.maxWaitMs)
      }
      this.#waiting.push(waiter)
    })
  }

  #take (): Release {
    this.#running++
    let released = false
    return () => {
      if (released) return
      released = true
      this.#running--
      const next = this.#waiting.shift()
      if (next === undefined) return
      clearTimeout(next.timer)
      next.admit(this.#take())
    }
  }
}
