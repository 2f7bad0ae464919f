// Builds the service for a test, on a fresh database of the kind asked for.
import type { Test } from 'tap'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { DestinationStream } from 'pino'
import { buildApp } from '../app.js'
import { basicAuthorization } from '../lib/auth/basic-auth-header.js'
import { loadConfig, type Config } from '../plugins/core/config.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('..', import.meta.url))

export type DatabaseKind = 'embedded' | 'postgres'

/** Embedded always; the PostgreSQL server too whenever TEST_DATABASE_URL names one. */
export const testDatabases: DatabaseKind[] = process.env.TEST_DATABASE_URL === undefined || process.env.TEST_DATABASE_URL === ''
  ? ['embedded']
  : ['embedded', 'postgres']

export const ADMIN = { username: 'admin', password: 'admin-password-for-tests' }

export const basic = basicAuthorization
export const adminAuth = basic(ADMIN.username, ADMIN.password)

export type TestApp = Awaited<ReturnType<typeof buildApp>>

export interface TestDatabase {
  kind: DatabaseKind
  /** Environment that points a service at this database. */
  env: Record<string, string>
}

// initdb of the embedded database takes seconds; do it once per machine and copy the result.
async function embeddedSnapshot (): Promise<string> {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string }
  const file = path.join(ROOT, '.cache', `pglite-${pkg.version}-initdb.tar.gz`)
  if (await stat(file).then(() => true, () => false)) return file
  await mkdir(path.dirname(file), { recursive: true })
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pglite-initdb-'))
  const lite = await PGlite.create(dir)
  const dump = await lite.dumpDataDir('gzip')
  await lite.close()
  await rm(dir, { recursive: true, force: true })
  // Written aside then renamed, so parallel test processes never read half a file.
  const partial = `${file}.${process.pid}.partial`
  await writeFile(partial, Buffer.from(await dump.arrayBuffer()))
  await rename(partial, file)
  return file
}

/** A database of its own for one test: a data directory, or a schema on the server. */
export async function createTestDatabase (t: Test, kind: DatabaseKind = 'embedded'): Promise<TestDatabase> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'netauto-test-'))
  t.teardown(async () => { await rm(dataDir, { recursive: true, force: true }) })
  if (kind === 'embedded') {
    const pgdata = path.join(dataDir, 'pgdata')
    await mkdir(pgdata, { recursive: true })
    await run('tar', ['-xzf', await embeddedSnapshot(), '-C', pgdata])
    return { kind, env: { DATA_DIR: dataDir } }
  }
  const serverUrl = process.env.TEST_DATABASE_URL
  if (serverUrl === undefined || serverUrl === '') throw new Error('TEST_DATABASE_URL is not set')
  const schema = `test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  // pg_trgm (migrations/006) lives once per database: in public, so that no test's schema takes
  // it along when it is dropped. Concurrent first creations race; one of them wins.
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public').catch(() => {})
  await admin.query(`CREATE SCHEMA ${schema}`)
  await admin.end()
  t.teardown(async () => {
    const client = new pg.Client({ connectionString: serverUrl })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await client.end()
  })
  const url = new URL(serverUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return { kind, env: { DATA_DIR: dataDir, DATABASE_URL: url.toString() } }
}

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
  database?: TestDatabase | DatabaseKind
  env?: Record<string, string | undefined>
  /** Receives every log line (as JSON text); set LOG_LEVEL in `env` to see them. */
  logStream?: DestinationStream
} = {}): Promise<TestApp> {
  const database = typeof options.database === 'object'
    ? options.database
    : await createTestDatabase(t, options.database ?? 'embedded')
  const app = await buildApp(testConfig({ ...database.env, ...options.env }), { logStream: options.logStream })
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
