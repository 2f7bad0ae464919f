// The disk budget of the clone caches under DATA_DIR/git (which the embedded database shares):
// their total size and number bounded, the least recently used cache not in use removed first.
import { readdir, rm, stat } from 'node:fs/promises'
import path from 'node:path'

/** Disk taken by a small file at least (one filesystem block). */
const MIN_FILE_BYTES = 4096
/** Loose object directories (`objects/ab`): counted by estimate as they are written, not walked each time. */
const LOOSE_DIR = /^[0-9a-f]{2}$/
/** Left by a process that stopped mid-way: a cache being made, a pack being fetched. */
const LEFTOVER = /\.tmp$/

interface Entry {
  /** Bytes of everything but loose objects, as last walked. */
  measured: number
  /** Bytes of loose objects: walked at start, then estimated as they are written. */
  loose: number
  /** When it was last used, as an order (larger is more recent). */
  used: number
  /** Operations using it (or waiting for its lock): never evicted while above 0. */
  users: number
  /** To walk again when released: fetched into, made or removed meanwhile. */
  stale: boolean
}

export interface CacheBudgetOptions {
  maxBytes: number
  maxRepositories: number
  /** Called for each cache removed, before it is deleted (to forget what memory holds of it). */
  onEvict?: (gitdir: string) => void
}

/** The size of `dir` on disk, in bytes (every file at least a block), split into loose objects and the rest. */
async function measure (dir: string, removeLeftovers = false): Promise<{ measured: number, loose: number }> {
  let measured = 0
  let loose = 0
  const walk = async (at: string, isLoose: boolean): Promise<void> => {
    const entries = await readdir(at, { withFileTypes: true }).catch(() => [])
    for (const e of entries) {
      const full = path.join(at, e.name)
      if (e.isDirectory()) {
        await walk(full, isLoose || (path.basename(at) === 'objects' && LOOSE_DIR.test(e.name)))
      } else if (removeLeftovers && LEFTOVER.test(e.name)) {
        await rm(full, { force: true })
      } else {
        const size = Math.max((await stat(full).catch(() => ({ size: 0 }))).size, MIN_FILE_BYTES)
        if (isLoose) loose += size
        else measured += size
      }
    }
  }
  await walk(dir, false)
  return { measured, loose }
}

export class CacheBudget {
  readonly #entries = new Map<string, Entry>()
  readonly #evicting = new Map<string, Promise<void>>()
  #clock = 0
  #loaded: Promise<void> | undefined

  constructor (private readonly root: string, private readonly options: CacheBudgetOptions) {}

  /** Bytes and caches counted now. */
  get usage (): { bytes: number, repositories: number } {
    let bytes = 0
    for (const e of this.#entries.values()) bytes += e.measured + e.loose
    return { bytes, repositories: this.#entries.size }
  }

  /**
   * Runs `fn` with the cache at `gitdir` in use (it is not evicted meanwhile), then counts it
   * again and evicts the least recently used caches not in use while over the budget.
   */
  async use<T> (gitdir: string, fn: () => Promise<T>): Promise<T> {
    let entry = this.#entries.get(gitdir)
    if (entry === undefined) {
      entry = { measured: 0, loose: 0, used: 0, users: 0, stale: true }
      this.#entries.set(gitdir, entry)
    }
    entry.users++
    entry.used = ++this.#clock
    try {
      await this.#load()
      await this.#evicting.get(gitdir)
      return await fn()
    } finally {
      entry.users--
      entry.used = ++this.#clock
      await this.#release(gitdir, entry)
    }
  }

  /** The cache was fetched into, made again or removed: walked again once released. */
  changed (gitdir: string): void {
    const entry = this.#entries.get(gitdir)
    if (entry !== undefined) entry.stale = true
  }

  /** The cache was emptied (made again, or removed). */
  emptied (gitdir: string): void {
    const entry = this.#entries.get(gitdir)
    if (entry === undefined) return
    entry.loose = 0
    entry.stale = true
  }

  /** Loose objects of `bytes` (uncompressed: an upper bound) written to the cache. */
  wroteLoose (gitdir: string, sizes: readonly number[]): void {
    const entry = this.#entries.get(gitdir)
    if (entry === undefined) return
    for (const size of sizes) entry.loose += Math.max(size, MIN_FILE_BYTES)
  }

  /** Counts what is on disk from an earlier run, once, before anything is evicted. */
  async #load (): Promise<void> {
    this.#loaded ??= (async () => {
      const found: Array<{ gitdir: string, mtime: number, size: { measured: number, loose: number } }> = []
      for (const provider of await readdir(this.root, { withFileTypes: true }).catch(() => [])) {
        if (!provider.isDirectory()) continue
        const dir = path.join(this.root, provider.name)
        for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
          const gitdir = path.join(dir, e.name)
          if (LEFTOVER.test(e.name)) {
            await rm(gitdir, { recursive: true, force: true })
          } else if (e.isDirectory() && !this.#entries.has(gitdir)) {
            found.push({ gitdir, mtime: (await stat(gitdir)).mtimeMs, size: await measure(gitdir, true) })
          }
        }
      }
      // Older than anything used since the start, in the order they were last changed.
      found.sort((a, b) => a.mtime - b.mtime)
      for (const [i, f] of found.entries()) {
        this.#entries.set(f.gitdir, { ...f.size, used: i - found.length, users: 0, stale: false })
      }
    })()
    await this.#loaded
  }

  async #release (gitdir: string, entry: Entry): Promise<void> {
    if (entry.stale && entry.users === 0) {
      entry.stale = false
      const exists = await stat(gitdir).then(() => true, () => false)
      if (!exists) {
        if (entry.users === 0 && this.#entries.get(gitdir) === entry) this.#entries.delete(gitdir)
      } else {
        const size = await measure(gitdir)
        entry.measured = size.measured
        // The estimate stands between walks; a walk gives the real figure.
        entry.loose = size.loose
      }
    }
    await this.#enforce()
  }

  async #enforce (): Promise<void> {
    const removals: Array<Promise<void>> = []
    for (;;) {
      const { bytes, repositories } = this.usage
      if (bytes <= this.options.maxBytes && repositories <= this.options.maxRepositories) break
      let victim: [string, Entry] | undefined
      for (const candidate of this.#entries) {
        if (candidate[1].users > 0) continue
        if (victim === undefined || candidate[1].used < victim[1].used) victim = candidate
      }
      if (victim === undefined) break
      const [gitdir] = victim
      this.#entries.delete(gitdir)
      this.options.onEvict?.(gitdir)
      const removal = rm(gitdir, { recursive: true, force: true }).catch(() => {}).finally(() => {
        if (this.#evicting.get(gitdir) === removal) this.#evicting.delete(gitdir)
      })
      this.#evicting.set(gitdir, removal)
      removals.push(removal)
    }
    await Promise.all(removals)
  }
}
