// The embedded PostgreSQL (PGlite) in a worker thread of its own: its WebAssembly runs there,
// so a query never holds the event loop that serves HTTP. The service talks to it through
// plugins/database/embedded.ts (embeddedDb), one message per statement.
//
// Rows cross the thread boundary as JSON text, never as cloned objects: a structured clone of a
// deeply nested document can fail inside the messaging layer, and then no answer ever arrives.
// A row that cannot be written as JSON is answered as an error.
//
// Run as a child process with `initdb <dir>`, the file creates a new data directory, applies the
// migrations to it and exits: the memory initdb and the migrations' first statements take (the
// WebAssembly memory, the compiled code of everything they ran, the allocator's arenas) then goes
// back to the system with the process, and the service's worker starts on a database that is ready.
import { fileURLToPath } from 'node:url'
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite, type Transaction } from '@electric-sql/pglite'
import { pg_trgm as pgTrgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { migrate, type MigrationTarget } from './migrations.js'
import type { Queryable } from './types.js'

export type EmbeddedRequest =
  | { id: number, op: 'query', text: string, params?: unknown[] }
  | { id: number, op: 'exec', text: string }
  | { id: number, op: 'close' }

/** A database error as data: its message and PostgreSQL's fields (code, detail, constraint...). */
export type EmbeddedError = { message: string } & Record<string, string | number>

/** Column values that JSON text does not carry as they are, by row index and column name. */
export type Revivals = Array<[row: number, column: string, kind: 'date' | 'dates' | 'bytes']>

export type EmbeddedReply =
  | { id: number, rows: string, revive: Revivals, rowCount: number, written: number }
  | { id: number, done: true, written: number }
  | { id: number, error: EmbeddedError }

/**
 * Settings of the embedded PostgreSQL: one connection and small caches (see docs/decisions.md);
 * ANALYZE samples 9,000 rows a table instead of 30,000, so that a maintenance pass holds the one
 * connection a third as long (ANALYZE of 100,000 groups: 0.27-0.34 s instead of 0.9-1.26 s).
 */
export const EMBEDDED_SETTINGS = [
  'shared_buffers=2MB',
  'wal_buffers=256kB',
  'work_mem=2MB',
  'maintenance_work_mem=16MB',
  'temp_buffers=2MB',
  'max_connections=4',
  'default_statistics_target=30'
]

export const startParams = (): string[] => [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS.flatMap((s) => ['-c', s])]

/** Sent when a row cannot be written as JSON text (nested too deep for it, for one). */
export const UNDELIVERABLE = 'DATABASE_ROW_UNDELIVERABLE'

// An Error does not cross a thread with its own fields; PostgreSQL's (code 23505 and the like)
// are what callers look at, so they travel as data.
function describe (err: unknown): EmbeddedError {
  const error: EmbeddedError = { message: err instanceof Error ? err.message : String(err) }
  if (typeof err === 'object' && err !== null) {
    for (const [key, value] of Object.entries(err)) {
      if (typeof value === 'string' || typeof value === 'number') error[key] = value
    }
  }
  return error
}

/** Rows as JSON text, with the dates and bytes of top-level columns noted to be restored. */
export function encodeRows (rows: Array<Record<string, unknown>>): { rows: string, revive: Revivals } {
  const revive: Revivals = []
  const plain = rows.map((row, index) => {
    let copy: Record<string, unknown> | undefined
    for (const [column, value] of Object.entries(row)) {
      let replaced: unknown
      if (value instanceof Date) {
        replaced = value.getTime()
        revive.push([index, column, 'date'])
      } else if (Array.isArray(value) && value.length > 0 && value.every((v) => v instanceof Date)) {
        replaced = value.map((v: Date) => v.getTime())
        revive.push([index, column, 'dates'])
      } else if (value instanceof Uint8Array) {
        replaced = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')
        revive.push([index, column, 'bytes'])
      } else {
        continue
      }
      copy ??= { ...row }
      copy[column] = replaced
    }
    return copy ?? row
  })
  return { rows: JSON.stringify(plain), revive }
}

/** The rows `encodeRows` wrote, dates as Date and bytes as Buffer again. */
export function decodeRows (text: string, revive: Revivals): Array<Record<string, unknown>> {
  const rows = JSON.parse(text) as Array<Record<string, unknown>>
  for (const [index, column, kind] of revive) {
    const row = rows[index]
    if (row === undefined) continue
    const value = row[column]
    if (kind === 'date') row[column] = new Date(value as number)
    else if (kind === 'dates') row[column] = (value as number[]).map((v) => new Date(v))
    else row[column] = Buffer.from(value as string, 'base64')
  }
  return rows
}

async function answer (lite: PGlite, request: EmbeddedRequest): Promise<EmbeddedReply> {
  switch (request.op) {
    case 'query': {
      const result = await lite.query<Record<string, unknown>>(request.text, request.params)
      let encoded: ReturnType<typeof encodeRows>
      try {
        encoded = encodeRows(result.rows)
      } catch (err) {
        return { id: request.id, error: { message: `A row could not be read: ${(err as Error).message}`, code: UNDELIVERABLE } }
      }
      // PGlite counts only written rows; pg's rowCount also counts the rows a SELECT returns.
      const written = result.affectedRows ?? 0
      return { id: request.id, ...encoded, rowCount: Math.max(written, result.rows.length), written }
    }
    case 'exec': {
      // Each result's affectedRows counts the script's writes so far.
      const results = await lite.exec(request.text)
      return { id: request.id, done: true, written: results.at(-1)?.affectedRows ?? 0 }
    }
    case 'close':
      if (!lite.closed) await lite.close()
      return { id: request.id, done: true, written: 0 }
  }
}

// pg_trgm: the trigram index behind `contains` in lists (migrations/006).
const open = async (dir: string): Promise<PGlite> => await PGlite.create(dir, { startParams: startParams(), extensions: { pg_trgm: pgTrgm } })

/** PGlite, alone in a process, as what the migrations need: one connection, so its lock is its own. */
function migrationTarget (lite: PGlite): MigrationTarget {
  const queryable = (on: PGlite | Transaction): Queryable => ({
    query: async <R>(text: string, params?: unknown[]) => {
      const result = await on.query<R>(text, params)
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length }
    },
    exec: async (script: string) => { await on.exec(script) }
  })
  return {
    ...queryable(lite),
    transaction: async (fn) => await lite.transaction(async (tx) => await fn(queryable(tx))),
    withAdvisoryLock: async (_key, fn) => await fn()
  }
}

const port = parentPort
if (port !== null) {
  const { dir } = workerData as { dir: string }
  try {
    const lite = await open(dir)
    port.on('message', (request: EmbeddedRequest) => {
      answer(lite, request).then(
        (reply) => { port.postMessage(reply) },
        (err: unknown) => { port.postMessage({ id: request.id, error: describe(err) } satisfies EmbeddedReply) })
    })
    port.postMessage({ ready: true })
  } catch (err) {
    port.postMessage({ ready: false, error: describe(err) })
  }
} else if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'initdb' && process.argv[3] !== undefined) {
  // A child process: make the data directory and apply the migrations, then exit; the exit code
  // says how it went.
  try {
    const lite = await open(process.argv[3])
    await migrate(migrationTarget(lite))
    // Statistics for the rows the migrations wrote: the service's first start then has no
    // maintenance pass to run (embedded-maintenance.ts, startIfNeverAnalyzed).
    await lite.exec('VACUUM ANALYZE')
    await lite.close()
    process.exitCode = 0
  } catch (err) {
    process.stderr.write(`initdb failed: ${(err as Error).message}\n`)
    process.exitCode = 1
  }
}
