import fp from 'fastify-plugin'
import pg from 'pg'
import { createHash } from 'node:crypto'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { Config } from '../core/config.js'
import { KeyedMutex } from '../../lib/http/keyed-mutex.js'
import { secureDataDir } from '../core/data-dir.js'
import { EmbeddedMaintenance, type MaintenancePass } from './embedded-maintenance.js'
import { decodeRows, type EmbeddedError, type EmbeddedReply, type EmbeddedRequest } from './embedded-worker.js'

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
  /** The embedded database's VACUUM and ANALYZE (embedded-maintenance.ts); none on a server, whose autovacuum does it. */
  readonly maintenance?: EmbeddedMaintenance
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
const EMBEDDED_WORKER = new URL(`./embedded-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)
const CLOSED = 'PGlite is closed'
/** The worker's error as an Error again, with PostgreSQL's fields (code, detail...) on it. */
const fromEmbedded = (error: EmbeddedError): Error => Object.assign(new Error(error.message), error)
/** Starting the embedded database (reopening its files) may take this long on a busy machine. */
const EMBEDDED_START_TIMEOUT_MS = 120_000

/**
 * Creates the embedded database's files under `dir` when they do not exist yet, in a child
 * process: initdb's WebAssembly memory (hundreds of MB) leaves with that process instead of
 * staying in this one for good.
 */
async function initEmbedded (dir: string): Promise<void> {
  if (await stat(path.join(dir, 'PG_VERSION')).then(() => true, () => false)) return
  const child = fork(fileURLToPath(EMBEDDED_WORKER), ['initdb', dir], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] })
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { if (stderr.length < 4096) stderr += chunk })
  const timer = setTimeout(() => { child.kill('SIGKILL') }, EMBEDDED_START_TIMEOUT_MS)
  try {
    const [code, signal] = await once(child, 'exit') as [number | null, NodeJS.Signals | null]
    if (code !== 0) throw new Error(`Creating the embedded database failed (${signal ?? `exit code ${code}`}): ${stderr.trim()}`)
  } finally {
    clearTimeout(timer)
  }
}

interface Pending { resolve: (reply: EmbeddedReply) => void, reject: (err: Error) => void, timer: NodeJS.Timeout }

/** One worker running PGlite; replaced as a whole when a call to it passes its deadline. */
interface EmbeddedWorker {
  send: (request: DistributiveOmit<EmbeddedRequest, 'id'>) => Promise<EmbeddedReply>
  /** False once it died, was replaced or closed: its calls fail from then on. */
  alive: () => boolean
  /** Closes PGlite, after the statement it runs; `now`: ends the thread without waiting for it. */
  stop: (now?: boolean) => Promise<void>
}

/** The error of a call whose worker is gone: a 503 (errors.ts knows the message). */
const gone = (reason: string): Error => new Error(`${CLOSED}: ${reason}`)

async function startEmbeddedWorker (dir: string, queryTimeoutMs: number, onStuck: () => void): Promise<EmbeddedWorker> {
  // A small young generation: the worker's JavaScript allocates little (rows pass as text).
  const worker = new Worker(EMBEDDED_WORKER, { workerData: { dir }, resourceLimits: { maxYoungGenerationSizeMb: 4 } })
  const pending = new Map<number, Pending>()
  let nextId = 0
  let alive = true
  const fail = (err: Error): void => {
    alive = false
    for (const call of pending.values()) {
      clearTimeout(call.timer)
      call.reject(err)
    }
    pending.clear()
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => { reject(gone(`the embedded database did not start within ${EMBEDDED_START_TIMEOUT_MS} ms`)) }, EMBEDDED_START_TIMEOUT_MS)
      worker.once('message', (message: { ready: boolean, error?: EmbeddedError }) => {
        clearTimeout(timer)
        if (message.ready) resolve()
        else reject(fromEmbedded(message.error ?? { message: 'The embedded database did not start' }))
      })
      worker.once('error', (err) => { clearTimeout(timer); reject(err) })
      worker.once('exit', (code) => { clearTimeout(timer); reject(new Error(`The embedded database stopped while starting (exit code ${code})`)) })
    })
  } catch (err) {
    await worker.terminate()
    throw err
  }
  worker.on('message', (reply: EmbeddedReply) => {
    const call = pending.get(reply.id)
    if (call === undefined) return
    pending.delete(reply.id)
    clearTimeout(call.timer)
    if ('error' in reply) call.reject(fromEmbedded(reply.error))
    else call.resolve(reply)
  })
  // A worker that dies takes the connection with it: its calls are 503s until it is replaced.
  worker.on('error', (err) => { fail(Object.assign(gone(err.message), { cause: err })) })
  worker.on('exit', () => { fail(gone('the embedded database stopped')) })

  const send = async (request: DistributiveOmit<EmbeddedRequest, 'id'>): Promise<EmbeddedReply> => {
    if (!alive) throw gone('the embedded database was restarted')
    const id = ++nextId
    return await new Promise<EmbeddedReply>((resolve, reject) => {
      // No statement may hold the one connection for good: past the deadline this worker is
      // given up (its calls answer 503) and a new one takes its place.
      const timer = setTimeout(() => {
        fail(Object.assign(gone(`no answer within ${queryTimeoutMs} ms; the embedded database is being restarted`), { code: 'DATABASE_TIMEOUT' }))
        onStuck()
      }, queryTimeoutMs)
      pending.set(id, { resolve, reject, timer })
      worker.postMessage({ ...request, id })
    })
  }
  return {
    alive: () => alive,
    send,
    async stop (now = false) {
      if (alive && !now) await send({ op: 'close' }).catch(() => {})
      alive = false
      await worker.terminate()
    }
  }
}

/** A connection bound to one worker: it fails once that worker is gone (a transaction never continues on another). */
// PGlite plans every statement with its values bound (it keeps no prepared statements), so every
// plan there is a custom one: the `plan` option has nothing to change.
function workerConnection (worker: EmbeddedWorker, written: (rows: number) => void): Queryable {
  return {
    async query<R> (text: string, params?: unknown[]): Promise<QueryResult<R>> {
      const reply = await worker.send({ op: 'query', text, params })
      if ('written' in reply) written(reply.written)
      return 'rows' in reply ? { rows: decodeRows(reply.rows, reply.revive) as R[], rowCount: reply.rowCount } : { rows: [], rowCount: 0 }
    },
    async exec (script) {
      const reply = await worker.send({ op: 'exec', text: script })
      if ('written' in reply) written(reply.written)
    }
  }
}

/**
 * Embedded PostgreSQL under `dataDir`, run in a worker thread (embedded-worker.ts).
 * PGlite is one connection: statements are serialised here, and a transaction holds that
 * connection from BEGIN to COMMIT or ROLLBACK. Every statement has a deadline
 * (DATABASE_QUERY_TIMEOUT_MS): past it the call answers 503 and the worker is replaced, so that
 * no statement can keep every other one waiting.
 */
async function embeddedDb (dataDir: string, queryTimeoutMs: number, onMaintenance?: (pass: MaintenancePass) => void): Promise<Db> {
  const dir = path.resolve(dataDir, 'pgdata')
  await mkdir(dir, { recursive: true, mode: 0o700 })
  await initEmbedded(dir)
  // initdb and earlier versions of the service made files other users could read.
  await secureDataDir(dir)
  let closed = false
  let current: Promise<EmbeddedWorker>
  let stopping: Promise<void> = Promise.resolve()
  const start = (): Promise<EmbeddedWorker> => {
    // The old worker is stopped first: two PGlite instances must never share the files.
    const started = stopping.then(async () => {
      const worker = await startEmbeddedWorker(dir, queryTimeoutMs, replace)
      // PostgreSQL writes its relation cache files on start whatever the umask: 0600 again (the
      // directory, 0700, already keeps them from other users).
      await secureDataDir(dir)
      return worker
    })
    started.catch(() => {})
    return started
  }
  function replace (): void {
    const old = current
    stopping = old.then(async (w) => { await w.stop() }, () => {})
    current = start()
  }
  current = start()
  await current
  /** The worker to use now: the current one, or a new one when it died or failed to start. */
  const live = async (): Promise<EmbeddedWorker> => {
    let failure: unknown
    for (let attempt = 0; attempt < 2 && !closed; attempt++) {
      try {
        const worker = await current
        if (worker.alive()) return worker
      } catch (err) {
        failure = err
      }
      replace()
    }
    throw Object.assign(gone(closed ? 'the database is closed' : 'the embedded database could not be started'), { cause: failure })
  }
  // One user of the connection at a time; advisory locks are in-process (one process owns the files).
  const serial = new KeyedMutex()
  const locks = new KeyedMutex()
  let users = 0
  // Counts the rows every statement writes, and runs VACUUM and ANALYZE when the connection is idle.
  const maintenance: EmbeddedMaintenance = new EmbeddedMaintenance({
    query: async (text) => await exclusive(async (connection) => await connection.query(text)),
    idle: () => users === 0
  }, onMaintenance)
  const written = (rows: number): void => { maintenance.written(rows) }
  const exclusive = async <T>(fn: (connection: Queryable) => Promise<T>): Promise<T> => {
    users++
    try {
      return await serial.run('connection', async () => await fn(workerConnection(await live(), written)))
    } finally {
      users--
    }
  }
  return {
    kind: 'embedded',
    maintenance,
    query: async (text, params) => await exclusive(async (connection) => await connection.query(text, params)),
    exec: async (script) => { await exclusive(async (connection) => { await connection.exec(script) }) },
    transaction: async (fn) => await exclusive(async (connection) => {
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
      closed = true
      // A pass starts no statement from now on; one still running past the wait is not waited for.
      const finished = await maintenance.close()
      await stopping
      await current.then(async (w) => { await w.stop(!finished) }, () => {})
    }
  }
}

/** Opens the server named by DATABASE_URL, or the embedded database under DATA_DIR. */
export async function openDatabase (
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DATABASE_POOL_SIZE' | 'DATABASE_QUERY_TIMEOUT_MS'>,
  options: { onMaintenance?: (pass: MaintenancePass) => void } = {}
): Promise<Db> {
  return config.DATABASE_URL !== undefined
    ? postgresDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE, config.DATABASE_QUERY_TIMEOUT_MS)
    : await embeddedDb(config.DATA_DIR, config.DATABASE_QUERY_TIMEOUT_MS, options.onMaintenance)
}

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url))

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
  const log = fastify.log.child({ component: 'embedded-maintenance' })
  const db = await openDatabase(fastify.config, {
    onMaintenance: ({ error, durationMs, longestStepMs, tables }) => {
      const ms = { durationMs: Math.round(durationMs), longestStepMs: Math.round(longestStepMs), tables }
      if (error === undefined) log.info(ms, 'embedded database vacuumed and analyzed')
      else log.warn({ ...ms, err: error }, 'embedded database maintenance failed')
    }
  })
  fastify.decorate('db', db)
  fastify.addHook('onClose', async () => { await db.close() })
  const added = await migrate(db)
  if (added.length > 0) fastify.log.info({ migrations: added }, 'database migrations applied')
  // Statistics for rows never analyzed (written before a restart, or by an older version); in the background.
  await db.maintenance?.startIfNeverAnalyzed()
}, { name: 'database', dependencies: ['config'] })
