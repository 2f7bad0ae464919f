import { hash } from 'node:crypto'

/**
 * Remembers verified credentials for a short time so that a request does not pay a password
 * hash. Keyed by a digest of the credential (the whole Authorization header value, which
 * encodes username and password): the password itself is never kept.
 */
export class CredentialCache<V> {
  readonly #entries = new Map<string, { username: string, value: V, expires: number, refreshAt: number }>()
  // How often each username was forgotten: a verification that began before a change of its user
  // must not store what it read (see `generation`).
  readonly #generations = new Map<string, number>()
  // The credential a connection sent last and its digest: a client on a keep-alive connection sends
  // the same header with every request, and comparing it costs far less than digesting it. The
  // header is held only while its connection lives (and a request holds it anyway).
  readonly #lastOnConnection = new WeakMap<object, { credential: string, key: string }>()
  readonly #ttlMs: number
  readonly #maxEntries: number
  // Milliseconds on a monotonic clock: a change of the wall clock neither expires every entry nor
  // keeps one past its time.
  readonly #now: () => number

  constructor (options: { ttlMs: number, maxEntries?: number, now?: () => number }) {
    this.#ttlMs = options.ttlMs
    this.#maxEntries = options.maxEntries ?? 10_000
    this.#now = options.now ?? (() => performance.now())
  }

  static key (credential: string): string {
    return hash('sha256', credential, 'hex')
  }

  get (credential: string): V | undefined {
    return this.lookup(credential)?.value
  }

  /**
   * The remembered value, and whether to verify the credential again now: true once per entry,
   * in the second half of its life, so that a client that keeps calling has it re-verified in the
   * background and never waits for a password hash. `connection` (the request's socket) lets a
   * connection that sends the same credential again skip computing its digest.
   */
  lookup (credential: string, connection?: object): { value: V, refresh: boolean } | undefined {
    const key = connection === undefined ? CredentialCache.key(credential) : this.#keyOnConnection(credential, connection)
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    const now = this.#now()
    if (entry.expires <= now) {
      this.#entries.delete(key)
      return undefined
    }
    const refresh = entry.refreshAt <= now
    if (refresh) entry.refreshAt = Infinity
    return { value: entry.value, refresh }
  }

  #keyOnConnection (credential: string, connection: object): string {
    const last = this.#lastOnConnection.get(connection)
    if (last?.credential === credential) return last.key
    const key = CredentialCache.key(credential)
    this.#lastOnConnection.set(connection, { credential, key })
    return key
  }

  /** Drops the entry of one credential (it no longer verifies). */
  drop (credential: string): void {
    this.#entries.delete(CredentialCache.key(credential))
  }

  /**
   * The current generation of `username`: pass it to `set` when the verification that will end in
   * that `set` begins. A `forget` in between makes that `set` a no-op.
   */
  generation (username: string): number {
    return this.#generations.get(username) ?? 0
  }

  /** Remembers `value` for `ttlMs` (default: the cache's own time to live). */
  set (credential: string, username: string, value: V, generation = this.generation(username), ttlMs = this.#ttlMs): void {
    if (ttlMs <= 0 || generation !== this.generation(username)) return
    // Map keeps insertion order: dropping the first entry drops the oldest.
    if (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next()
      if (oldest.done !== true) this.#entries.delete(oldest.value)
    }
    const now = this.#now()
    this.#entries.set(CredentialCache.key(credential), { username, value, expires: now + ttlMs, refreshAt: now + ttlMs / 2 })
  }

  /** Drops every entry of `username`, e.g. when that user changes. */
  forget (username: string): void {
    this.#generations.set(username, this.generation(username) + 1)
    for (const [key, entry] of this.#entries) {
      if (entry.username === username) this.#entries.delete(key)
    }
  }

  get size (): number { return this.#entries.size }
}

/**
 * What a background re-check does with a remembered credential, given its user's row as it is
 * now (undefined: the user is gone). The password was checked against one stored hash
 * (`checkedAgainst`: its `CredentialCache.key` digest); while the row holds that same hash the
 * password still matches it, so the check need not pay a password hash again. A new hash (the
 * password was set again) needs a real check.
 */
export function recheckVerdict (checkedAgainst: string, current: { passwordHash: string, user: { disabled: boolean } } | undefined): 'keep' | 'drop' | 'verify' {
  if (current === undefined || current.user.disabled) return 'drop'
  return CredentialCache.key(current.passwordHash) === checkedAgainst ? 'keep' : 'verify'
}
