// Builds the service for a test, on a fresh database of the kind asked for.
import type { Test } from 'tap'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { execFile } from 'node:child_process'
import diagnostics from 'node:diagnostics_channel'
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { FastifyInstance } from 'fastify'
import type { DestinationStream } from 'pino'
import { buildApp } from '../app.js'
import { basicAuthorization } from '../lib/auth/basic-auth-header.js'
import { MIGRATIONS_DIR, migrate, openDatabase } from '../plugins/database/index.js'
import { loadConfig, type Config } from '../plugins/core/config.js'
import type { TracingOptions } from '../plugins/core/tracing.js'
import { watchExchanges } from './helpers/openapi.js'
import { until } from './helpers/until.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('..', import.meta.url))

export type DatabaseKind = 'embedded' | 'postgres'

const serverAvailable = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== ''

/** Embedded always; the PostgreSQL server too whenever TEST_DATABASE_URL names one. */
export const testDatabases: DatabaseKind[] = serverAvailable ? ['embedded', 'postgres'] : ['embedded']

/**
 * 'any': for a test whose outcome does not depend on the database (HTTP parsing, validation,
 * headers, configuration). The server when there is one (a fresh schema costs far less than
 * starting an embedded database), the embedded database otherwise.
 */
export type DatabaseChoice = DatabaseKind | 'any'
const resolveKind = (choice: DatabaseChoice): DatabaseKind => choice !== 'any' ? choice : serverAvailable ? 'postgres' : 'embedded'

export const ADMIN = { username: 'admin', password: 'admin-password-for-tests' }

export const basic = basicAuthorization
export const adminAuth = basic(ADMIN.username, ADMIN.password)

export type TestApp = Awaited<ReturnType<typeof buildApp>>

export interface TestDatabase {
  kind: DatabaseKind
  /** Environment that points a service at this database. */
  env: Record<string, string>
}

const exists = async (file: string): Promise<boolean> => await stat(file).then(() => true, () => false)

/**
 * Runs `make` unless `target` exists; `make` puts it in place whole (a rename). Parallel test
 * processes wait for the one holding `${target}.lock` instead of making it too (a lock older than
 * five minutes, left by a killed process, is taken over).
 */
export async function makeOnce (target: string, make: () => Promise<void>, staleMs = 300_000): Promise<void> {
  const lock = `${target}.lock`
  await mkdir(path.dirname(target), { recursive: true })
  let locked = false
  // Generous: a stale lock is taken over only after staleMs, and whoever takes it over makes the target then.
  await until(async () => {
    if (await exists(target)) return true
    try {
      await mkdir(lock)
      locked = true
      return true
    } catch {
      const age = Date.now() - (await stat(lock).then((s) => s.mtimeMs, () => Date.now()))
      if (age > staleMs) await rm(lock, { recursive: true, force: true })
      return false
    }
  }, `${target} is made, or its lock is free`, 2 * staleMs)
  if (!locked) return
  try {
    if (!(await exists(target))) await make()
  } finally {
    await rm(lock, { recursive: true, force: true })
  }
  if (!(await exists(target))) throw new Error(`making ${target} did not make it`)
}

// initdb of the embedded database takes seconds; do it once per machine and copy the result.
async function embeddedSnapshot (): Promise<string> {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string }
  const file = path.join(ROOT, '.cache', `pglite-${pkg.version}-initdb.tar.gz`)
  await makeOnce(file, async () => { await initdbSnapshot(file) })
  return file
}

async function initdbSnapshot (file: string): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pglite-initdb-'))
  const lite = await PGlite.create(dir)
  const dump = await lite.dumpDataDir('gzip')
  await lite.close()
  await rm(dir, { recursive: true, force: true })
  // Written aside then renamed, so parallel test processes never read half a file.
  const partial = `${file}.${process.pid}.partial`
  await writeFile(partial, Buffer.from(await dump.arrayBuffer()))
  await rename(partial, file)
}

// Starting an embedded database and migrating it costs more than copying files: the migrated
// data directory is made once per set of migrations (the key is their names and contents, so a
// new or changed migration makes a new one) and copied for each test that asks for it.
let migratedKey: Promise<string> | undefined
async function migrationsKey (): Promise<string> {
  migratedKey ??= (async () => {
    const hash = createHash('sha256')
    for (const file of (await readdir(MIGRATIONS_DIR)).sort()) {
      hash.update(`${file}\0`).update(await readFile(path.join(MIGRATIONS_DIR, file))).update('\0')
    }
    return hash.digest('hex').slice(0, 16)
  })()
  return await migratedKey
}

async function migratedSnapshot (): Promise<string> {
  const initdb = await embeddedSnapshot()
  const dir = initdb.replace(/-initdb\.tar\.gz$/, `-migrated-${await migrationsKey()}`)
  await makeOnce(dir, async () => { await migratedCopy(initdb, dir) })
  return dir
}

async function migratedCopy (initdb: string, dir: string): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'pglite-migrated-'))
  try {
    const pgdata = path.join(work, 'pgdata')
    await mkdir(pgdata)
    await run('tar', ['-xzf', initdb, '-C', pgdata])
    const db = await openDatabase(testConfig({ DATA_DIR: work }))
    try {
      await migrate(db)
    } finally {
      await db.close()
    }
    // Renamed into place whole, so that no test copies half a directory.
    await rename(pgdata, dir)
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/**
 * A database of its own for one test: a data directory, or a schema on the server.
 * `migrated`: an embedded one starts as a copy of a migrated one (the service finds every
 * migration applied); a schema on the server is migrated by the service when it starts.
 */
export async function createTestDatabase (t: Test, choice: DatabaseChoice = 'embedded', options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const kind = resolveKind(choice)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'netauto-test-'))
  t.teardown(async () => { await rm(dataDir, { recursive: true, force: true }) })
  if (kind === 'embedded') {
    const pgdata = path.join(dataDir, 'pgdata')
    if (options.migrated === true) {
      // cp(1): fs.cp walks the thousand files in JavaScript, at several times the CPU.
      await run('cp', ['-R', await migratedSnapshot(), pgdata])
    } else {
      await mkdir(pgdata, { recursive: true })
      await run('tar', ['-xzf', await embeddedSnapshot(), '-C', pgdata])
    }
    return { kind, env: { DATA_DIR: dataDir } }
  }
  const serverUrl = process.env.TEST_DATABASE_URL
  if (serverUrl === undefined || serverUrl === '') throw new Error('TEST_DATABASE_URL is not set')
  const schema = `test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl, options: NO_COMMIT_FLUSH })
  await admin.connect()
  // pg_trgm (migrations/006) lives once per database: in public, so that no test's schema takes
  // it along when it is dropped. Concurrent first creations race; one of them wins.
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public').catch(() => {})
  await admin.query(`CREATE SCHEMA ${schema}`)
  await admin.end()
  t.teardown(async () => {
    const client = new pg.Client({ connectionString: serverUrl, options: NO_COMMIT_FLUSH })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await client.end()
  })
  const url = new URL(serverUrl)
  url.searchParams.set('options', `-c search_path=${schema} ${NO_COMMIT_FLUSH}`)
  // Instances sharing a server share the key that seals secrets (or the later ones refuse to
  // start): as a deployment sets SECRET_KEY, each test database has one of its own.
  return { kind, env: { DATA_DIR: dataDir, DATABASE_URL: url.toString(), SECRET_KEY: `test-secret-key-of-${schema}-${randomBytes(12).toString('hex')}` } }
}

// A test's commits do not wait for the server's WAL to reach the disk: what a commit makes visible
// is the same, and a test never outlives a crash of the server. On a slow disk a flushed commit
// took 3 ms against 0.7 (300 single-row INSERTs), and the suite commits many thousands.
const NO_COMMIT_FLUSH = '-c synchronous_commit=off'

export function testConfig (env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    LOG_LEVEL: 'silent',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    // The shared test machine stalls at times; only the load-shedding test turns shedding on.
    LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: '0',
    ...env
  })
}

/**
 * Builds and readies the service on `database` (a fresh embedded one by default), closed when
 * the test ends. Pass the same database to two calls for two instances sharing it.
 */
export async function buildTestApp (t: Test, options: {
  database?: TestDatabase | DatabaseChoice
  env?: Record<string, string | undefined>
  /** Receives every log line (as JSON text); set LOG_LEVEL in `env` to see them. */
  logStream?: DestinationStream
  /** Where the spans go (an in-memory exporter's processor): traces on. */
  tracing?: TracingOptions
  /** false: requests are not checked against the document (a test sending garbage on purpose); answers still are. */
  checkRequests?: false
  /** Statuses the test provokes on purpose that the document rightly leaves out (a 500 from data no client can write). */
  unlistedStatuses?: readonly number[]
} = {}): Promise<TestApp> {
  const database = typeof options.database === 'object'
    ? options.database
    : await createTestDatabase(t, options.database ?? 'embedded', { migrated: true })
  const env: Record<string, string | undefined> = { ...database.env, ...options.env }
  // A test that sets the key under its old name means that key, not the database's.
  if (options.env?.ORCHESTRATOR_SECRET_KEY !== undefined && options.env.SECRET_KEY === undefined) delete env.SECRET_KEY
  // Every exchange with the service is checked against its OpenAPI document: a status, body or
  // header the document lacks (or a request it accepted that the document does not describe)
  // fails the test that made it. Fastify announces each instance as it is created, before any
  // route is added; buildApp creates its instance before its first await.
  const watch = ({ fastify }: { fastify: FastifyInstance }): void => {
    watchExchanges(fastify, (problem) => { t.fail(`exchange off the OpenAPI document: ${problem}`) }, { requests: options.checkRequests, unlistedStatuses: options.unlistedStatuses })
  }
  diagnostics.subscribe('fastify.initialization', watch as (message: unknown) => void)
  const building = buildApp(testConfig(env), { logStream: options.logStream, tracing: options.tracing })
  diagnostics.unsubscribe('fastify.initialization', watch as (message: unknown) => void)
  const app = await building
  t.teardown(async () => { await app.close() })
  await app.ready()
  return app
}

/** A log destination that keeps every line, for asserting what was (not) logged. */
export function captureLogs (): DestinationStream & { lines: string[] } {
  const lines: string[] = []
  return { lines, write: (line: string) => { lines.push(line) } }
}

/** Creates a user through the API and returns its Authorization header value. */
export async function createUser (app: TestApp, user: { username: string, password?: string, roles?: string[], groups?: string[], email?: string }): Promise<string> {
  const password = user.password ?? `pw-${user.username}-${randomBytes(4).toString('hex')}`
  const response = await app.inject({
    method: 'POST',
    url: '/users',
    headers: { authorization: adminAuth },
    payload: { ...user, password }
  })
  if (response.statusCode !== 200) throw new Error(`creating user ${user.username}: ${response.statusCode} ${response.body}`)
  return basic(user.username, password)
}
