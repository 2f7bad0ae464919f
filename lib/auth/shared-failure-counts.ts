/**
 * Failed-login counts shared by every instance of a deployment (kept in its database), beside
 * each instance's own LoginGuard. A check takes a place in each of its keys' counts before it
 * runs, as the guard does: whatever the concurrency across instances, at most `max` checks that
 * may fail start per key and window. A check that succeeds (or does not run) gives its places
 * back; one that fails keeps them until the key's window ends.
 *
 * A flood must not become a write storm, so:
 * - one statement is in flight at a time; places taken meanwhile are summed per key and go in the
 *   next one (a batch of many keys, each once), and the answer says which of them fit;
 * - a key found full is refused on this instance without the database until its window ends;
 * - at most `maxPendingKeys` keys wait for the next statement: past that, `CountsBusy`.
 */
export interface SharedCountsOptions {
  /** Adds `reserve` to the keys' counts, takes `giveBack` off them; answers the counts of the keys reserved in. */
  apply: (reserve: KeyChange[], giveBack: KeyChange[]) => Promise<KeyCount[]>
  maxPendingKeys: number
  /** Entries kept at most of keys found full (the oldest go first). */
  maxBlocked: number
  now?: () => number
}

export interface KeyChange { key: string, n: number }
/** A key's count after the change, and the seconds until its window ends. */
export interface KeyCount { key: string, failures: number, secondsLeft: number }

export type SharedReservation =
  | { ok: true, release: () => void }
  | { ok: false, retryAfterS: number }

/** Too many keys are waiting for the database: nothing was counted. */
export class CountsBusy extends Error {
  constructor () {
    super('too many failed-login counts are waiting for the database')
    this.name = 'CountsBusy'
  }
}

interface Pending {
  n: number
  waiters: Array<{ index: number, resolve: (count: KeyCount) => void, reject: (err: unknown) => void }>
}

export class SharedFailureCounts {
  readonly #options: SharedCountsOptions
  readonly #now: () => number
  #reserve = new Map<string, Pending>()
  #giveBack = new Map<string, number>()
  // Keys found full, until their window ends; in order of insertion, so the oldest go first.
  readonly #blocked = new Map<string, number>()
  #running: Promise<void> | undefined
  /** Statements sent, for metrics and the benchmark. */
  statements = 0
  /** Places given back that were dropped because too many were waiting (they count until their window ends). */
  droppedGiveBacks = 0

  constructor (options: SharedCountsOptions) {
    this.#options = options
    this.#now = options.now ?? (() => performance.now())
  }

  /** Takes a place in each key's count; refused (with the wait in s) when one of them is full. */
  async reserve (keys: Array<{ key: string, max: number }>): Promise<SharedReservation> {
    const now = this.#now()
    let blockedFor = 0
    for (const { key } of keys) {
      const until = this.#blocked.get(key)
      if (until === undefined) continue
      if (until > now) blockedFor = Math.max(blockedFor, Math.ceil((until - now) / 1000))
      else this.#blocked.delete(key)
    }
    if (blockedFor > 0) return { ok: false, retryAfterS: blockedFor }
    const fresh = keys.filter(({ key }) => !this.#reserve.has(key)).length
    if (this.#reserve.size + fresh > this.#options.maxPendingKeys) throw new CountsBusy()
    const answers = keys.map(({ key }) => this.#enqueue(key))
    this.#schedule()
    const counts = await Promise.all(answers)
    let retryAfterS = 0
    keys.forEach(({ key, max }, i) => {
      const { count, position } = counts[i] as { count: KeyCount, position: number }
      if (position <= max) return
      retryAfterS = Math.max(retryAfterS, Math.max(1, count.secondsLeft))
      this.#block(key, this.#now() + Math.max(1, count.secondsLeft) * 1000)
    })
    let released = false
    const release = (): void => {
      if (released) return
      released = true
      for (const { key } of keys) this.#release(key)
    }
    if (retryAfterS === 0) return { ok: true, release }
    // A refused check counts nowhere: its places in the other keys are given back too.
    release()
    return { ok: false, retryAfterS }
  }

  async #enqueue (key: string): Promise<{ count: KeyCount, position: number }> {
    let pending = this.#reserve.get(key)
    if (pending === undefined) {
      pending = { n: 0, waiters: [] }
      this.#reserve.set(key, pending)
    }
    const index = pending.n++
    const entry = pending
    const count = await new Promise<KeyCount>((resolve, reject) => { entry.waiters.push({ index, resolve, reject }) })
    // The statement added `entry.n` places at once: this check's is the (index+1)th of them.
    return { count, position: count.failures - entry.n + index + 1 }
  }

  #release (key: string): void {
    const n = this.#giveBack.get(key)
    if (n === undefined && this.#giveBack.size >= this.#options.maxPendingKeys) {
      this.droppedGiveBacks++
      return
    }
    this.#giveBack.set(key, (n ?? 0) + 1)
    this.#schedule()
  }

  #block (key: string, until: number): void {
    this.#blocked.delete(key)
    for (const oldest of this.#blocked.keys()) {
      if (this.#blocked.size < this.#options.maxBlocked) break
      this.#blocked.delete(oldest)
    }
    this.#blocked.set(key, until)
  }

  /** Starts the next statement unless one is in flight (it starts the next one when it ends). */
  #schedule (): void {
    if (this.#running !== undefined) return
    this.#running = Promise.resolve().then(async () => { await this.#flush() }).finally(() => {
      this.#running = undefined
      if (this.#reserve.size > 0 || this.#giveBack.size > 0) this.#schedule()
    })
  }

  async #flush (): Promise<void> {
    const reserve = this.#reserve
    const giveBack = this.#giveBack
    this.#reserve = new Map()
    this.#giveBack = new Map()
    if (reserve.size === 0 && giveBack.size === 0) return
    this.statements++
    let counts: KeyCount[]
    try {
      counts = await this.#options.apply(
        [...reserve].map(([key, { n }]) => ({ key, n })),
        [...giveBack].map(([key, n]) => ({ key, n })))
    } catch (err) {
      // Places given back are lost with the statement: they count until their window ends.
      this.droppedGiveBacks += giveBack.size
      for (const { waiters } of reserve.values()) for (const waiter of waiters) waiter.reject(err)
      return
    }
    const byKey = new Map(counts.map((count) => [count.key, count]))
    for (const [key, { waiters }] of reserve) {
      const count = byKey.get(key)
      for (const waiter of waiters) {
        if (count === undefined) waiter.reject(new Error(`no count came back for a key reserved in (${key})`))
        else waiter.resolve(count)
      }
    }
  }
}
