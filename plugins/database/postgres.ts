// The database on a PostgreSQL server (DATABASE_URL), through a pg pool.
import pg from 'pg'
import { createHash } from 'node:crypto'
import type { Db, QueryOptions, QueryResult } from './types.js'

const statementNames = new Map<string, string>()
function statementName (text: string): string {
  let name = statementNames.get(text)
  if (name === undefined) {
    name = `s${createHash('sha256').update(text).digest('hex').slice(0, 16)}`
    statementNames.set(text, name)
  }
  return name
}

/** The database on the PostgreSQL server at `connectionString`, through a pool of at most `max` connections. */
export function postgresDb (connectionString: string, max: number, queryTimeoutMs: number): Db {
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
