// The embedded database (PGlite under DATA_DIR), run in a worker thread (embedded-worker.ts).
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { KeyedMutex } from '../../lib/http/keyed-mutex.js'
import { secureDataDir } from '../core/data-dir.js'
import { EmbeddedMaintenance, type MaintenancePass } from './embedded-maintenance.js'
import { decodeRows, type EmbeddedError, type EmbeddedReply, type EmbeddedRequest } from './embedded-worker.js'
import type { Db, Queryable, QueryResult } from './types.js'

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

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
export async function embeddedDb (dataDir: string, queryTimeoutMs: number, onMaintenance?: (pass: MaintenancePass) => void): Promise<Db> {
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
