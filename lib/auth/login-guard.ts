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
 * What is kept of failures has a small fixed size per entry and a bounded total, whatever is sent:
 * counters are keyed by an HMAC of the address and subject (not the username or client id as
 * sent), a refused check creates no entry, entries go when their time has passed, and each table
 * holds at most `maxEntries` (the least recently active go first when it is full).
 */
export interface GuardOptions {
  /** Failures allowed per key within the window. */
  max: number
  /** Failures allowed per client address across usernames within the window. */
  maxPerAddress: number
  windowMs: number
  /** How long a credential that verified stays known good (ms). */
  knownGoodMs?: number
  /** Entries kept at most per table (counters, known good, known bad); the least recently active go first. */
  maxEntries?: number
  now?: () => number
}

/** Failure times (at most the key's limit of them: no check starts past it) and checks running. */
interface Counter {
  failures: number[]
  inFlight: number
}

/** Who a check counts against: the client address, and the username or client id it presents. */
export interface GuardKeys {
  address: string
  subject: string
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

// Counter keys: 16 bytes of an HMAC, so an entry has the same small size whatever was sent.
const KEY_BYTES = 16

/** The key of a count for `parts` (a kind, the address, the subject): 16 bytes of an HMAC, no username in clear. */
export function countKey (hmacKey: Buffer, kind: string, ...parts: string[]): string {
  const hmac = createHmac('sha256', hmacKey).update(kind)
  for (const part of parts) hmac.update('\u0000').update(part)
  return hmac.digest().subarray(0, KEY_BYTES).toString('base64url')
}

export class LoginGuard {
  // Each Map is in order of last activity (an entry is moved to the end when it changes), so
  // entries past their time are found at the front, and the front is what goes when one is full.
  readonly #counters = new Map<string, Counter>()
  readonly #good = new Map<string, number>()
  readonly #bad = new Map<string, { hash: string, until: number }>()
  readonly #key = randomBytes(32)
  readonly #options: Required<Omit<GuardOptions, 'now'>>
  readonly #now: () => number

  constructor (options: GuardOptions) {
    this.#options = { knownGoodMs: 24 * 3600_000, maxEntries: 50_000, ...options }
    this.#now = options.now ?? (() => performance.now())
  }

  /** A digest standing for one (subject, secret) pair; the secret cannot be read back from it. */
  fingerprint (subject: string, secret: string): string {
    return createHmac('sha256', this.#key).update(subject).update('\u0000').update(secret).digest('base64url')
  }

  static keys (address: string, subject: string): GuardKeys {
    return { address, subject }
  }

  /** Entries held per table, for metrics and tests. */
  sizes (): { counters: number, good: number, bad: number } {
    return { counters: this.#counters.size, good: this.#good.size, bad: this.#bad.size }
  }

  #digest (kind: string, ...parts: string[]): string {
    return countKey(this.#key, kind, ...parts)
  }

  /**
   * Takes a place in the address's count and the subject's, or says how long (s) until one frees.
   * Nothing is created for a check that is refused: an address over its count makes no new entry.
   */
  reserve (keys: GuardKeys): Reservation {
    const now = this.#now()
    this.#expire(now)
    const addressKey = this.#digest('a', keys.address)
    const subjectKey = this.#digest('s', keys.address, keys.subject)
    const address = this.#current(addressKey, now)
    const subject = this.#current(subjectKey, now)
    const retryAfterS = Math.max(this.#wait(address, this.#options.maxPerAddress, now), this.#wait(subject, this.#options.max, now))
    if (retryAfterS > 0) {
      // A count being hammered is the last to go when the table is full.
      this.#touch(addressKey, address)
      this.#touch(subjectKey, subject)
      return { ok: false, retryAfterS }
    }
    const held: Array<[string, Counter]> = [[addressKey, this.#take(addressKey, address)], [subjectKey, this.#take(subjectKey, subject)]]
    let settled = false
    const settle = (failed: boolean): void => {
      if (settled) return
      settled = true
      const at = this.#now()
      for (const [key, counter] of held) {
        counter.inFlight--
        if (failed) counter.failures.push(at)
        // An entry evicted meanwhile is not brought back; an empty one is not kept.
        if (this.#counters.get(key) !== counter) continue
        this.#counters.delete(key)
        if (counter.failures.length > 0 || counter.inFlight > 0) this.#counters.set(key, counter)
      }
    }
    return { ok: true, ticket: { succeed: () => { settle(false) }, fail: () => { settle(true) }, cancel: () => { settle(false) } } }
  }

  /** The counter of `key` with the failures that left the window dropped; undefined when there is none. */
  #current (key: string, now: number): Counter | undefined {
    const counter = this.#counters.get(key)
    if (counter === undefined) return undefined
    const from = now - this.#options.windowMs
    let expired = 0
    while (expired < counter.failures.length && (counter.failures[expired] ?? Infinity) <= from) expired++
    if (expired > 0) counter.failures.splice(0, expired)
    return counter
  }

  /** Seconds until `counter` has room under `max`; 0 when it has room now. */
  #wait (counter: Counter | undefined, max: number, now: number): number {
    if (counter === undefined || counter.failures.length + counter.inFlight < max) return 0
    const oldest = counter.failures[0]
    return oldest === undefined ? 1 : Math.max(1, Math.ceil((oldest + this.#options.windowMs - now) / 1000))
  }

  /** Moves `key`'s counter, when there is one, to the end (most recently active). */
  #touch (key: string, counter: Counter | undefined): void {
    if (counter === undefined) return
    this.#counters.delete(key)
    this.#counters.set(key, counter)
  }

  /** Takes a place in `key`'s counter (made when there is none), moving it to the end. */
  #take (key: string, counter: Counter | undefined): Counter {
    if (counter === undefined) {
      counter = { failures: [], inFlight: 0 }
      makeRoom(this.#counters, this.#options.maxEntries)
    } else {
      this.#counters.delete(key)
    }
    counter.inFlight++
    this.#counters.set(key, counter)
    return counter
  }

  // Drops, from the front of each table, the entries whose time has passed. Each entry is dropped
  // once, so this costs nothing per check on average.
  #expire (now: number): void {
    const from = now - this.#options.windowMs
    for (const [key, counter] of this.#counters) {
      if (counter.inFlight > 0 || (counter.failures.at(-1) ?? -Infinity) > from) break
      this.#counters.delete(key)
    }
    for (const [key, until] of this.#good) {
      if (until > now) break
      this.#good.delete(key)
    }
    for (const [key, entry] of this.#bad) {
      if (entry.until > now) break
      this.#bad.delete(key)
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
    const now = this.#now()
    this.#expire(now)
    this.#bad.delete(fingerprint)
    remember(this.#good, fingerprint, now + this.#options.knownGoodMs, this.#options.maxEntries)
  }

  rememberBad (fingerprint: string, storedHash: string): void {
    const now = this.#now()
    this.#expire(now)
    this.#good.delete(fingerprint)
    remember(this.#bad, fingerprint, { hash: storedHash, until: now + this.#options.windowMs }, this.#options.maxEntries)
  }
}

/** Drops the least recently active entries until one more fits. */
function makeRoom (map: Map<string, unknown>, maxEntries: number): void {
  for (const key of map.keys()) {
    if (map.size < maxEntries) break
    map.delete(key)
  }
}

function remember<V> (map: Map<string, V>, key: string, value: V, maxEntries: number): void {
  map.delete(key)
  makeRoom(map, maxEntries)
  map.set(key, value)
}
