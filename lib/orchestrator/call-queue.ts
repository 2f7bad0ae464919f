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

/** Why a call was not admitted: the line was full, the wait too long, or its caller left. */
export type Refusal = 'full' | 'waited' | 'gone'

/**
 * The side of a call that may leave while it waits (the HTTP response it answers): a call whose
 * caller is gone leaves the line at once, and is never sent (an action nobody waits for would
 * still change the orchestrator).
 */
export interface Caller {
  readonly destroyed: boolean
  once: (event: 'close', listener: () => void) => unknown
  off: (event: 'close', listener: () => void) => unknown
}

/** What a caller holds while its call runs: `release` once it is over (idempotent). */
export type Release = () => void

interface Waiter {
  admit: (release: Release) => void
  timer: NodeJS.Timeout
  /** Listens for the caller's leaving while it waits. */
  left: () => void
}

const REFUSALS: Record<Refusal, string> = {
  full: 'the queue is full',
  waited: 'waited too long for a free connection',
  gone: 'the caller left while waiting'
}

export class CallQueueRefusal extends Error {
  constructor (readonly reason: Refusal) {
    super(REFUSALS[reason])
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

  /**
   * Resolves with a slot's release; rejects with a CallQueueRefusal when the line is full, the
   * wait too long, or `caller` left before its turn. A call that need not wait pays for no listener.
   */
  async acquire (caller?: Caller): Promise<Release> {
    if (this.#running < this.options.slots && this.#waiting.length === 0) return this.#take()
    if (this.#waiting.length >= this.options.maxWaiting) throw new CallQueueRefusal('full')
    if (caller?.destroyed === true) throw new CallQueueRefusal('gone')
    return await new Promise<Release>((resolve, reject) => {
      const leave = (why: Refusal): void => {
        const at = this.#waiting.indexOf(waiter)
        /* c8 ignore next -- a waiter leaves the line either way, never twice */
        if (at !== -1) this.#waiting.splice(at, 1)
        clearTimeout(waiter.timer)
        caller?.off('close', waiter.left)
        reject(new CallQueueRefusal(why))
      }
      const waiter: Waiter = {
        admit: (release) => {
          caller?.off('close', waiter.left)
          resolve(release)
        },
        timer: setTimeout(() => { leave('waited') }, this.options.maxWaitMs),
        left: () => { leave('gone') }
      }
      caller?.once('close', waiter.left)
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
