// What the event of a denied request (401, 403) may hold, and how many of them are recorded: a
// client without credentials chooses its path and the username it sends, and how often it asks,
// so each event is small and fixed in size and the events of a window are bounded per client
// address and in total. What is not recorded is counted and said in one event per address.

/** The longest path a denied request's target keeps (the query string is never kept). */
export const DENIED_PATH_MAX = 128

/** The longest text of its caller's choosing a failed login's event keeps (target, client id). */
export const DENIED_TEXT_MAX = 128

/** `text` cut at DENIED_TEXT_MAX characters (an ellipsis marks the cut). */
export function boundedText (text: string): string {
  return text.length > DENIED_TEXT_MAX ? `${text.slice(0, DENIED_TEXT_MAX)}…` : text
}

// The rule a username is created under (schemas/users.ts): anything else names no one.
const POSSIBLE_USERNAME = /^[A-Za-z0-9._@-]{1,64}$/

/** `name` when some user could have it (the rule of user creation), else null. */
export function possibleUsername (name: string | undefined | null): string | null {
  return typeof name === 'string' && POSSIBLE_USERNAME.test(name) ? name : null
}

/**
 * `<METHOD> <path>` of a denied request: the path without its query string (it may carry a
 * token), cut at DENIED_PATH_MAX characters (an ellipsis marks the cut).
 */
export function deniedTarget (method: string, url: string): string {
  const query = url.indexOf('?')
  const path = query < 0 ? url : url.slice(0, query)
  const cut = path.length > DENIED_PATH_MAX ? `${path.slice(0, DENIED_PATH_MAX)}…` : path
  // The method of a route that answered: one of a few known words.
  return `${method.slice(0, 16)} ${cut}`
}

export interface DeniedLimits {
  /** Events recorded per address and window; past it the address's denied requests are counted. */
  perAddress: number
  /** Events recorded in a window, all addresses together (counts of suppressed requests included). */
  total: number
  /** Addresses whose suppressed requests are counted apart; past it they are counted together. */
  addresses: number
}

/** A count of denied requests not recorded in a window: one address's, or (address null) those of many. */
export interface Suppressed {
  address: string | null
  suppressed: number
  /** How many addresses a shared count is for. */
  addresses: number
}

/**
 * Decides, window by window, which denied requests are recorded: the first `perAddress` of each
 * address while the window's `total` allows; the others are counted, per address for the first
 * `addresses` addresses, together beyond. `close()` ends the window and gives the counts, one per
 * address (at most `total` of them, the rest summed in one), to be recorded as events.
 */
export class DeniedLimiter {
  readonly #limits: DeniedLimits
  #recorded = 0
  #byAddress = new Map<string, { recorded: number, suppressed: number }>()
  #otherSuppressed = 0
  #otherAddresses = new Set<string>()

  constructor (limits: DeniedLimits) {
    this.#limits = limits
  }

  /** Whether a denied request of `address` is recorded; when not, it is counted. */
  admit (address: string): boolean {
    let entry = this.#byAddress.get(address)
    if (entry === undefined) {
      if (this.#byAddress.size >= this.#limits.addresses) {
        this.#otherSuppressed++
        // Counted, not kept: the set stays within `addresses` entries as well.
        if (this.#otherAddresses.size < this.#limits.addresses) this.#otherAddresses.add(address)
        return false
      }
      entry = { recorded: 0, suppressed: 0 }
      this.#byAddress.set(address, entry)
    }
    if (entry.recorded < this.#limits.perAddress && this.#recorded < this.#limits.total) {
      entry.recorded++
      this.#recorded++
      return true
    }
    entry.suppressed++
    return false
  }

  /** Ends the window: the counts of requests not recorded, at most `total` + 1 of them. */
  close (): Suppressed[] {
    const counts: Suppressed[] = []
    let restSuppressed = this.#otherSuppressed
    let restAddresses = this.#otherAddresses.size
    for (const [address, entry] of this.#byAddress) {
      if (entry.suppressed === 0) continue
      if (counts.length < this.#limits.total) {
        counts.push({ address, suppressed: entry.suppressed, addresses: 1 })
      } else {
        restSuppressed += entry.suppressed
        restAddresses++
      }
    }
    if (restSuppressed > 0) counts.push({ address: null, suppressed: restSuppressed, addresses: restAddresses })
    this.#recorded = 0
    this.#byAddress = new Map()
    this.#otherSuppressed = 0
    this.#otherAddresses = new Set()
    return counts
  }
}
