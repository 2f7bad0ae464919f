// How many Git operations talk to providers at once, in the instance and per user. Each holds
// what one exchange reads (an advertisement in memory, a pack streamed to disk), so their number
// bounds the memory and disk they take; past it a call is refused at once, not queued.

export type SlotRefusal = 'instance' | 'user'

export class ProviderSlots {
  #running = 0
  readonly #byUser = new Map<string, number>()

  constructor (private readonly max: number, private readonly maxPerUser: number) {}

  /** A slot for `user`, with its release (to call once), or why there is none. */
  acquire (user: string): { ok: true, release: () => void } | { ok: false, refusal: SlotRefusal } {
    const own = this.#byUser.get(user) ?? 0
    if (own >= this.maxPerUser) return { ok: false, refusal: 'user' }
    if (this.#running >= this.max) return { ok: false, refusal: 'instance' }
    this.#running++
    this.#byUser.set(user, own + 1)
    let released = false
    return {
      ok: true,
      release: () => {
        if (released) return
        released = true
        this.#running--
        const left = (this.#byUser.get(user) ?? 1) - 1
        if (left === 0) this.#byUser.delete(user)
        else this.#byUser.set(user, left)
      }
    }
  }

  get running (): number {
    return this.#running
  }
}
