import { createHmac, randomBytes } from 'node:crypto'

/**
 * Throttles password (and client secret) guesses without ever refusing a credential known to be
 * right, and without counting a credential known to be wrong twice.
 *
 * - Failures are counted per key (client address + username, and client address alone) in a
 *   sliding window. A check takes its place in every key's count *before* it runs (`reserve`), so
 *   checks in flight count: whatever the concurrency, at most `max` checks that may fail start per
 *   key and window. A check that succeeds gives its place back; one that fails keeps it until it
 *   leaves the window.
 * - A credential that verified on this instance lately (`knownGood`) is never refused by a count:
 *   it still goes through the full password check, with priority, but reserves nothing. The owner
 *   of an account under a guessing attack keeps working.
 * - A credential that failed against the same stored hash lately (`knownBad`) is refused again
 *   without a password check and without being counted: a forgotten script retrying an old
 *   password uses one failure of its address's budget, not all of it.
 *
 * Credentials are remembered as HMACs under a key made for this process, never as themselves.
 */
export interface GuardOptions {
  /** Failures allowed per key within the window. */
  max: number
  /** Failures allowed per client address across usernames within the window. */
  maxPerAddress: number
  windowMs: number
  /** How long a credential that verified stays known good (ms). */
  knownGoodMs?: number
  /** Entries kept at most per table (counters, known good, known bad); the oldest go first. */
  maxEntries?: number
  now?: () => number
}

interface Counter {
  failures: number[]
  inFlight: number
}

export type Reservation =
  | { ok: true, ticket: Ticket }
  | { ok: false, retryAfterS: number }

export interface Ticket {
  /** The check found the credential right: its places are given back. */
  succeed: () => void
  /** The check found the credential wrong: its places count until they leave the window. */
  fail: () => void
  /** The check did not run (queue full, outage): its places are given back. */
  cancel: () => void
}

export class LoginGuard {
  readonly #counters = new Map<string, Counter>()
  readonly #good = new Map<string, number>()
  readonly #bad = new Map<string, { hash: string, until: number }>()
  readonly #key = randomBytes(32)
  readonly #options: Required<Omit<GuardOptions, 'now'>>
  readonly #now: () => number

  constructor (options: GuardOptions) {
    this.#options = { knownGoodMs: 24 * 3600_000, maxEntries: 100_000, ...options }
    this.#now = options.now ?? (() => performance.now())
  }

  /** A digest standing for one (subject, secret) pair; the secret cannot be read back from it. */
  fingerprint (subject: string, secret: string): string {
    return createHmac('sha256', this.#key).update(subject).update('\u0000').update(secret).digest('base64url')
  }

  static keys (address: string, subject: string): string[] {
    return [`s\u0000${address}\u0000${subject}`, `a\u0000${address}`]
  }

  /** Takes a place in each key's count, or says how long (s) until one frees. */
  reserve (keys: readonly string[]): Reservation {
    const now = this.#now()
    const counters: Counter[] = []
    let retryAfterS = 0
    for (const key of keys) {
      const counter = this.#counter(key, now)
      const max = key.startsWith('a\u0000') ? this.#options.maxPerAddress : this.#options.max
      if (counter.failures.length + counter.inFlight >= max) {
        const oldest = counter.failures[0]
        const wait = oldest === undefined ? 1 : Math.ceil((oldest + this.#options.windowMs - now) / 1000)
        retryAfterS = Math.max(retryAfterS, wait, 1)
      }
      counters.push(counter)
    }
    if (retryAfterS > 0) return { ok: false, retryAfterS }
    for (const counter of counters) counter.inFlight++
    let settled = false
    const settle = (failed: boolean): void => {
      if (settled) return
      settled = true
      const at = this.#now()
      for (const counter of counters) {
        counter.inFlight--
        if (failed) counter.failures.push(at)
      }
    }
    return { ok: true, ticket: { succeed: () => { settle(false) }, fail: () => { settle(true) }, cancel: () => { settle(false) } } }
  }

  #counter (key: string, now: number): Counter {
    let counter = this.#counters.get(key)
    if (counter === undefined) {
      if (this.#counters.size >= this.#options.maxEntries) this.#prune(now)
      counter = { failures: [], inFlight: 0 }
      this.#counters.set(key, counter)
    }
    const from = now - this.#options.windowMs
    let expired = 0
    while (expired < counter.failures.length && (counter.failures[expired] ?? Infinity) <= from) expired++
    if (expired > 0) counter.failures.splice(0, expired)
    return counter
  }

  // Drops counters with nothing in them, then (still full) the oldest.
  #prune (now: number): void {
    const from = now - this.#options.windowMs
    for (const [key, counter] of this.#counters) {
      if (counter.inFlight === 0 && counter.failures.every((at) => at <= from)) this.#counters.delete(key)
    }
    while (this.#counters.size >= this.#options.maxEntries) {
      const oldest = this.#counters.keys().next()
      if (oldest.done === true) break
      this.#counters.delete(oldest.value)
    }
  }

  isKnownGood (fingerprint: string): boolean {
    const until = this.#good.get(fingerprint)
    if (until === undefined) return false
    if (until > this.#now()) return true
    this.#good.delete(fingerprint)
    return false
  }

  /** True when this credential failed lately against the very hash (`storedHash` digest) it would meet now. */
  isKnownBad (fingerprint: string, storedHash: string): boolean {
    const entry = this.#bad.get(fingerprint)
    if (entry === undefined) return false
    if (entry.until > this.#now() && entry.hash === storedHash) return true
    this.#bad.delete(fingerprint)
    return false
  }

  rememberGood (fingerprint: string): void {
    this.#bad.delete(fingerprint)
    remember(this.#good, fingerprint, this.#now() + this.#options.knownGoodMs, this.#options.maxEntries)
  }

  rememberBad (fingerprint: string, storedHash: string): void {
    this.#good.delete(fingerprint)
    remember(this.#bad, fingerprint, { hash: storedHash, until: this.#now() + this.#options.windowMs }, this.#options.maxEntries)
  }
}

function remember<V> (map: Map<string, V>, key: string, value: V, maxEntries: number): void {
  map.delete(key)
  if (map.size >= maxEntries) {
    const oldest = map.keys().next()
    if (oldest.done !== true) map.delete(oldest.value)
  }
  map.set(key, value)
}
