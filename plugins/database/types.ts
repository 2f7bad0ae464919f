// The one database interface of the service; postgres.ts and embedded.ts implement it.
import type { EmbeddedMaintenance } from './embedded-maintenance.js'

export interface QueryResult<R> {
  rows: R[]
  rowCount: number
}

export interface QueryOptions {
  /**
   * 'custom': planned for its parameter values on every call, never from a plan kept since an
   * earlier call. For statements whose best plan depends on the values (a list's filters) or on
   * a table that grows fast (an import's name look-ups): a kept plan made while the table was
   * small or for other values would stay wrong. Costs a planning per call (0.1 to 0.5 ms measured).
   */
  plan?: 'custom'
}

/** What a query runs on: the database itself or one open transaction. */
export interface Queryable {
  query<R = Record<string, unknown>>(text: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<R>>
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>
}

/** The one database interface of the service, over a PostgreSQL server or embedded PostgreSQL. */
export interface Db extends Queryable {
  readonly kind: 'postgres' | 'embedded'
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /** Runs `fn` while holding a lock named `key`, shared by every instance using this database. */
  withAdvisoryLock<T>(key: string, fn: () => Promise<T>): Promise<T>
  /** Connections in use and waiting, for metrics. */
  poolStats(): { total: number, idle: number, waiting: number }
  /** The embedded database's VACUUM and ANALYZE (embedded-maintenance.ts); none on a server, whose autovacuum does it. */
  readonly maintenance?: EmbeddedMaintenance
  close(): Promise<void>
}
