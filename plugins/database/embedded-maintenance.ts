// VACUUM and ANALYZE for the embedded database, which runs neither by itself: PGlite starts no
// autovacuum launcher, so dead rows and index entries would stay for the life of the data
// directory and the planner would plan on defaults, with no statistics. A PostgreSQL server has
// autovacuum; nothing here runs there. See docs/decisions.md ("The embedded database vacuums
// and analyzes after counted writes").
import type { QueryResult } from './types.js'

/** A pass is due once this many rows, plus SCALE_FACTOR of the rows the tables hold, were written. */
export const BASE_ROWS = 1000
export const SCALE_FACTOR = 0.1
/** A step waits for the connection to be idle at most this long, then takes its turn anyway. */
export const MAX_IDLE_WAIT_MS = 2000
/** How often a waiting step looks whether the connection is idle. */
const IDLE_POLL_MS = 10
/** close() waits this long for a running step; past it the caller stops the database without it. */
export const CLOSE_WAIT_MS = 5000

/** Tables of fewer rows than this are vacuumed (and analyzed) together, in one statement. */
const SMALL_TABLE_ROWS = 10_000

/** The ordinary tables of the service's schema, quoted for a statement, with their rows as last counted. */
const TABLES_SQL = `SELECT format('%I.%I', n.nspname, c.relname) AS name, c.reltuples::float8 AS tuples
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind = 'r' AND n.nspname = current_schema() ORDER BY c.relname`
/**
 * The rows those tables hold, as VACUUM and ANALYZE last counted them, and how many tables hold
 * rows that never were (reltuples -1; an empty table has nothing to count yet).
 */
const SIZE_SQL = `SELECT coalesce(sum(greatest(c.reltuples, 0)), 0)::float8 AS tuples,
    count(*) FILTER (WHERE c.reltuples < 0 AND pg_relation_size(c.oid) > 0)::int AS never
  FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace`

/** The one connection of the embedded database, as the maintenance uses it. */
export interface MaintenanceConnection {
  /** Runs one statement in turn with every other user of the connection. */
  query: <R>(text: string) => Promise<QueryResult<R>>
  /** True when no statement runs or waits for the connection. */
  idle: () => boolean
}

/** What one pass did, for logs and metrics. */
export interface MaintenancePass {
  durationMs: number
  /** The longest single statement: how long a request arriving at the wrong moment waits. */
  longestStepMs: number
  tables: number
  error?: unknown
}

export interface MaintenanceState {
  /** Rows written since the last pass began. */
  changedRows: number
  /** Rows written that make the next pass due. */
  threshold: number
  passes: number
  failures: number
  /** Seconds spent in passes, all together. */
  seconds: number
  running: boolean
}

class Closing extends Error {}

export class EmbeddedMaintenance {
  readonly #connection: MaintenanceConnection
  readonly #onPass: (pass: MaintenancePass) => void
  #changed = 0
  #threshold = BASE_ROWS
  #passes = 0
  #failures = 0
  #seconds = 0
  #closing = false
  #pass: Promise<void> | undefined
  #step: Promise<unknown> | undefined
  #wake: (() => void) | undefined

  constructor (connection: MaintenanceConnection, onPass: (pass: MaintenancePass) => void = () => {}) {
    this.#connection = connection
    this.#onPass = onPass
  }

  /** Rows a statement wrote (inserted, updated, deleted); a pass starts once enough were. */
  written (rows: number): void {
    if (rows <= 0) return
    this.#changed += rows
    if (this.#changed >= this.#threshold) this.#start()
  }

  /**
   * At start, after the migrations: reads how large the data is, and starts a pass when some
   * table holds rows that were never analyzed (data written before these passes existed, or
   * since a start whose rows did not reach a pass), so the planner has statistics.
   */
  async startIfNeverAnalyzed (): Promise<boolean> {
    const { never } = await this.#size()
    if (never === 0) return false
    this.#start()
    return true
  }

  /** The pass running now (or the one last started), for tests and shutdown. */
  async settled (): Promise<void> { await this.#pass }

  state (): MaintenanceState {
    return {
      changedRows: this.#changed,
      threshold: this.#threshold,
      passes: this.#passes,
      failures: this.#failures,
      seconds: this.#seconds,
      running: this.#pass !== undefined
    }
  }

  /**
   * No step starts from now on. Waits for the statement running now, at most CLOSE_WAIT_MS;
   * false when it was still running then.
   */
  async close (): Promise<boolean> {
    this.#closing = true
    this.#wake?.()
    const step = this.#step
    if (step === undefined) return true
    let timer: NodeJS.Timeout | undefined
    const finished = await Promise.race([
      step.then(() => true, () => true),
      new Promise<boolean>((resolve) => { timer = setTimeout(() => { resolve(false) }, CLOSE_WAIT_MS) })
    ])
    clearTimeout(timer)
    return finished
  }

  #start (): void {
    if (this.#pass !== undefined || this.#closing) return
    this.#pass = this.#run().finally(() => {
      this.#pass = undefined
      // Writes made during the pass may already make the next one due.
      if (this.#changed >= this.#threshold) this.#start()
    })
  }

  async #run (): Promise<void> {
    const started = performance.now()
    let longest = 0
    let tables = 0
    this.#changed = 0
    const step = async <R>(text: string): Promise<R[]> => {
      await this.#whenIdle()
      if (this.#closing) throw new Closing('the database is closing')
      const begun = performance.now()
      const running = this.#connection.query<R>(text)
      this.#step = running
      try {
        return (await running).rows
      } finally {
        this.#step = undefined
        longest = Math.max(longest, performance.now() - begun)
      }
    }
    let error: unknown
    try {
      // One statement per large table and kind (the small ones together), each in its own turn
      // on the connection: a request waits for one of them at most, never for the whole pass.
      // VACUUM first, as VACUUM (ANALYZE) does, so that ANALYZE samples no dead rows.
      const found = await step<{ name: string, tuples: number }>(TABLES_SQL)
      tables = found.length
      const small = found.filter((r) => r.tuples < SMALL_TABLE_ROWS).map((r) => r.name)
      const groups = [...found.filter((r) => r.tuples >= SMALL_TABLE_ROWS).map((r) => r.name), ...(small.length > 0 ? [small.join(', ')] : [])]
      for (const group of groups) {
        await step(`VACUUM ${group}`)
        await step(`ANALYZE ${group}`)
      }
      // The catalogs: each ANALYZE replaces rows of pg_statistic. The tables done above cost
      // little here (their pages are marked all-visible).
      await step('VACUUM')
      await this.#size(step) // the next pass's threshold, from the rows just counted
      this.#passes++
    } catch (err) {
      error = err
      if (!(err instanceof Closing)) this.#failures++
    }
    const durationMs = performance.now() - started
    this.#seconds += durationMs / 1000
    if (!(error instanceof Closing)) this.#onPass({ durationMs, longestStepMs: longest, tables, ...(error === undefined ? {} : { error }) })
  }

  // Reads how many rows the tables hold, which sets when the next pass is due, and how many
  // tables hold rows never analyzed.
  async #size (query = async <R>(text: string): Promise<R[]> => (await this.#connection.query<R>(text)).rows): Promise<{ never: number }> {
    const [row] = await query<{ tuples: number, never: number }>(SIZE_SQL)
    this.#threshold = BASE_ROWS + SCALE_FACTOR * (row?.tuples ?? 0)
    return { never: row?.never ?? 0 }
  }

  /** Until no statement runs or waits (looked at every IDLE_POLL_MS), at most MAX_IDLE_WAIT_MS. */
  async #whenIdle (): Promise<void> {
    const deadline = performance.now() + MAX_IDLE_WAIT_MS
    while (!this.#closing && !this.#connection.idle() && performance.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, IDLE_POLL_MS)
        this.#wake = () => { clearTimeout(timer); resolve() }
      })
      this.#wake = undefined
    }
  }
}
