import fp from 'fastify-plugin'
import pg from 'pg'
import { createHash } from 'node:crypto'
import { mkdir, readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { Config } from './config.js'
import { KeyedMutex } from '../lib/http/keyed-mutex.js'
import type { EmbeddedError, EmbeddedReply, EmbeddedRequest } from './embedded-database-worker.js'

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

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
  close(): Promise<void>
}

const statementNames = new Map<string, string>()
function statementName (text: string): string {
  let name = statementNames.get(text)
  if (name === undefined) {
    name = `s${createHash('sha256').update(text).digest('hex').slice(0, 16)}`
    statementNames.set(text, name)
  }
  return name
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
  const query = async <R>(client: pg.Pool | pg.PoolClient, text: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<R>> => {
    // A statement with parameters is prepared once per connection under a name derived from its
    // text, so the server parses and plans it once instead of on every call. The service's SQL
    // is a fixed set of texts (values always travel as parameters), so the names stay few.
    // A custom plan goes as an unnamed statement, which the server plans with the values bound.
    const result = params === undefined || params.length === 0
      ? await client.query(text)
      : options?.plan === 'custom'
        ? await client.query({ text, values: params })
        : await client.query({ text, values: params, name: statementName(text) })
    return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 }
  }
  return {
    kind: 'postgres',
    query: async (text, params, options) => await query(pool, text, params, options),
    async transaction (fn) {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const result = await fn({
          query: async (text, params, options) => await query(client, text, params, options),
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

// The worker's own file: .js when built, .ts when the tests run the sources.
const EMBEDDED_WORKER = new URL(`./embedded-database-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)
const CLOSED = 'PGlite is closed'
/** The worker's error as an Error again, with PostgreSQL's fields (code, detail...) on it. */
const fromEmbedded = (error: EmbeddedError): Error => Object.assign(new Error(error.message), error)

/**
 * Embedded PostgreSQL under `dataDir`, run in a worker thread (embedded-database-worker.ts).
 * PGlite is one connection: statements are serialised here, and a transaction holds that
 * connection from BEGIN to COMMIT or ROLLBACK.
 */
async function embeddedDb (dataDir: string): Promise<Db> {
  const dir = path.resolve(dataDir, 'pgdata')
  await mkdir(dir, { recursive: true })
  const worker = new Worker(EMBEDDED_WORKER, { workerData: { dir } })
  const pending = new Map<number, { resolve: (reply: EmbeddedReply) => void, reject: (err: Error) => void }>()
  let nextId = 0
  let closed = false
  const fail = (err: Error): void => {
    closed = true
    for (const { reject } of pending.values()) reject(err)
    pending.clear()
  }
  await new Promise<void>((resolve, reject) => {
    worker.once('message', (message: { ready: boolean, error?: EmbeddedError }) => {
      if (message.ready) resolve()
      else reject(fromEmbedded(message.error ?? { message: 'The embedded database did not start' }))
    })
    worker.once('error', reject)
    worker.once('exit', (code) => { reject(new Error(`The embedded database stopped while starting (exit code ${code})`)) })
  })
  worker.on('message', (reply: EmbeddedReply) => {
    const call = pending.get(reply.id)
    pending.delete(reply.id)
    if (call === undefined) return
    if ('error' in reply) call.reject(fromEmbedded(reply.error))
    else call.resolve(reply)
  })
  // A worker that dies takes the connection with it: every call from then on is a 503.
  worker.on('error', (err) => { fail(Object.assign(new Error(`${CLOSED}: ${err.message}`), { cause: err })) })
  worker.on('exit', () => { fail(new Error(CLOSED)) })

  const send = async (request: DistributiveOmit<EmbeddedRequest, 'id'>): Promise<EmbeddedReply> => {
    if (closed) throw new Error(CLOSED)
    const id = ++nextId
    return await new Promise<EmbeddedReply>((resolve, reject) => {
      pending.set(id, { resolve, reject })
      worker.postMessage({ ...request, id })
    })
  }
  // PGlite plans every statement with its values bound (it keeps no prepared statements), so
  // every plan there is a custom one.
  const connection: Queryable = {
    async query<R> (text: string, params?: unknown[]): Promise<QueryResult<R>> {
      const reply = await send({ op: 'query', text, params })
      return 'rows' in reply ? { rows: reply.rows as R[], rowCount: reply.rowCount } : { rows: [], rowCount: 0 }
    },
    async exec (script) { await send({ op: 'exec', text: script }) }
  }
  // One user of the connection at a time; advisory locks are in-process (one process owns the files).
  const serial = new KeyedMutex()
  const locks = new KeyedMutex()
  let users = 0
  const exclusive = async <T>(fn: () => Promise<T>): Promise<T> => {
    users++
    try {
      return await serial.run('connection', fn)
    } finally {
      users--
    }
  }
  return {
    kind: 'embedded',
    query: async (text, params) => await exclusive(async () => await connection.query(text, params)),
    exec: async (script) => { await exclusive(async () => { await connection.exec(script) }) },
    transaction: async (fn) => await exclusive(async () => {
      await connection.exec('BEGIN')
      try {
        const result = await fn(connection)
        await connection.exec('COMMIT')
        return result
      } catch (err) {
        await connection.exec('ROLLBACK').catch(() => {})
        throw err
      }
    }),
    withAdvisoryLock: async (key, fn) => await locks.run(key, fn),
    poolStats: () => ({ total: 1, idle: users === 0 ? 1 : 0, waiting: Math.max(0, users - 1) }),
    async close () {
      if (closed) return
      await send({ op: 'close' }).catch(() => {})
      closed = true
      await worker.terminate()
    }
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
