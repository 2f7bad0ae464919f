// The embedded PostgreSQL (PGlite) in a worker thread of its own: its WebAssembly runs there,
// so a query never holds the event loop that serves HTTP. The service talks to it through
// plugins/database.ts (embeddedDb), one message per statement.
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm as pgTrgm } from '@electric-sql/pglite/contrib/pg_trgm'

export type EmbeddedRequest =
  | { id: number, op: 'query', text: string, params?: unknown[] }
  | { id: number, op: 'exec', text: string }
  | { id: number, op: 'close' }

/** A database error as data: its message and PostgreSQL's fields (code, detail, constraint...). */
export type EmbeddedError = { message: string } & Record<string, string | number>

export type EmbeddedReply =
  | { id: number, rows: unknown[], rowCount: number }
  | { id: number, done: true }
  | { id: number, error: EmbeddedError }

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

async function answer (lite: PGlite, request: EmbeddedRequest): Promise<EmbeddedReply> {
  switch (request.op) {
    case 'query': {
      const result = await lite.query(request.text, request.params)
      // PGlite counts only written rows; pg's rowCount also counts the rows a SELECT returns.
      return { id: request.id, rows: result.rows, rowCount: Math.max(result.affectedRows ?? 0, result.rows.length) }
    }
    case 'exec':
      await lite.exec(request.text)
      return { id: request.id, done: true }
    case 'close':
      if (!lite.closed) await lite.close()
      return { id: request.id, done: true }
  }
}

const port = parentPort
if (port !== null) {
  const { dir } = workerData as { dir: string }
  try {
    // pg_trgm: the trigram index behind `contains` in lists (migrations/006).
    const lite = await PGlite.create(dir, { extensions: { pg_trgm: pgTrgm } })
    port.on('message', (request: EmbeddedRequest) => {
      answer(lite, request).then(
        (reply) => { port.postMessage(reply) },
        (err: unknown) => { port.postMessage({ id: request.id, error: describe(err) } satisfies EmbeddedReply) })
    })
    port.postMessage({ ready: true })
  } catch (err) {
    port.postMessage({ ready: false, error: describe(err) })
  }
}
