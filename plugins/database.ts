import fp from 'fastify-plugin'
import pg from 'pg'
import { PGlite } from '@electric-sql/pglite'
import { mkdir, readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Config } from './config.js'
import { KeyedMutex } from '../lib/keyed-mutex.js'

export interface QueryResult<R> {
  rows: R[]
  rowCount: number
}

/** What a query runs on: the database itself or one open transaction. */
export interface Queryable {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<R>>
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
  close(): Promise<void>
}

function postgresDb (connectionString: string, max: number, queryTimeoutMs: number): Db {
  // Bounded waits: a server that stops answering (network partition, frozen host) must turn into
  // errors (503s), not requests that hang holding connections. Keepalive notices dead peers.
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: 5000,
    query_timeout: queryTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000
  })
  // An idle client whose server went away emits 'error'; the pool drops it. Without a listener
  // that event would crash the process.
  pool.on('error', () => {})
  const query = async <R>(client: pg.Pool | pg.PoolClient, text: string, params?: unknown[]): Promise<QueryResult<R>> => {
    const result = await client.query(text, params)
    return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 }
  }
  return {
    kind: 'postgres',
    query: async (text, params) => await query(pool, text, params),
    async transaction (fn) {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const result = await fn({
          query: async (text, params) => await query(client, text, params),
          exec: async (script) => { await client.query(script) }
        })
        await client.query('COMMIT')
        client.release()
        return result
      } catch (err) {
        // A broken connection cannot roll back; destroy it rather than return it to the pool.
        const rolledBack = await client.query('ROLLBACK').then(() => true, () => false)
        client.release(!rolledBack)
        throw err
      }
    },
    async withAdvisoryLock (key, fn) {
      // A session-level lock needs its own connection for as long as it is held.
      const client = await pool.connect()
      let healthy = true
      try {
        await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key])
        try {
          return await fn()
        } finally {
          await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key])
            .catch(() => { healthy = false })
        }
      } catch (err) {
        healthy = false
        throw err
      } finally {
        client.release(!healthy)
      }
    },
    async exec (script) { await pool.query(script) },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close () { await pool.end() }
  }
}

async function embeddedDb (dataDir: string): Promise<Db> {
  const dir = path.resolve(dataDir, 'pgdata')
  await mkdir(dir, { recursive: true })
  const lite = await PGlite.create(dir)
  // PGlite is one connection in this process, so an in-process lock serialises every user of it.
  const locks = new KeyedMutex()
  let waiting = 0
  const query = async <R>(client: Pick<PGlite, 'query'>, text: string, params?: unknown[]): Promise<QueryResult<R>> => {
    waiting++
    try {
      const result = await client.query<R>(text, params)
      // PGlite counts only written rows; pg's rowCount also counts the rows a SELECT returns.
      return { rows: result.rows, rowCount: Math.max(result.affectedRows ?? 0, result.rows.length) }
    } finally {
      waiting--
    }
  }
  return {
    kind: 'embedded',
    query: async (text, params) => await query(lite, text, params),
    transaction: async (fn) => await lite.transaction(async (tx) =>
      await fn({
        query: async (text, params) => await query(tx, text, params),
        exec: async (script) => { await tx.exec(script) }
      })),
    withAdvisoryLock: async (key, fn) => await locks.run(key, fn),
    async exec (script) { await lite.exec(script) },
    poolStats: () => ({ total: 1, idle: waiting === 0 ? 1 : 0, waiting: Math.max(0, waiting - 1) }),
    async close () { if (!lite.closed) await lite.close() }
  }
}

/** Opens the server named by DATABASE_URL, or the embedded database under DATA_DIR. */
export async function openDatabase (config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DATABASE_POOL_SIZE' | 'DATABASE_QUERY_TIMEOUT_MS'>): Promise<Db> {
  return config.DATABASE_URL !== undefined
    ? postgresDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE, config.DATABASE_QUERY_TIMEOUT_MS)
    : await embeddedDb(config.DATA_DIR)
}

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url))

/**
 * Applies the migrations not yet recorded, in file-name order, each in its own transaction.
 * The advisory lock lets several instances start at once against one server.
 */
export async function migrate (db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => /^\d+-[\w-]+\.sql$/.test(f)).sort()
  return await db.withAdvisoryLock('schema_migrations', async () => {
    await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const { rows } = await db.query<{ id: string }>('SELECT id FROM schema_migrations')
    const applied = new Set(rows.map((r) => r.id))
    const added: string[] = []
    for (const file of files) {
      if (applied.has(file)) continue
      const script = await readFile(path.join(dir, file), 'utf8')
      await db.transaction(async (tx) => {
        await tx.exec(script)
        await tx.query('INSERT INTO schema_migrations (id) VALUES ($1)', [file])
      })
      added.push(file)
    }
    return added
  })
}

declare module 'fastify' {
  interface FastifyInstance {
    db: Db
  }
}

export default fp(async (fastify) => {
  const db = await openDatabase(fastify.config)
  fastify.decorate('db', db)
  fastify.addHook('onClose', async () => { await db.close() })
  const added = await migrate(db)
  if (added.length > 0) fastify.log.info({ migrations: added }, 'database migrations applied')
}, { name: 'database', dependencies: ['config'] })
