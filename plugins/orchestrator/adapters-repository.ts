// The adapters registry's table access: a plain factory, which plugins/orchestrator/index.ts decorates
// the instance with (fastify.adaptersRepository).
import type { Queryable } from '../database/index.js'
import { ADAPTER_DEFAULTS, ADAPTER_LIST, type Adapter, type AdapterCreate, type AdapterUpdate } from '../../schemas/orchestrator.js'
import { listStatements, readPage, type ListRequest } from '../../lib/lists/list-query.js'
import { AdapterSecretUnreadable } from '../../lib/orchestrator/errors.js'
import { SecretKeyMismatch } from '../../lib/auth/secret-box.js'
import type { SecretSealer } from '../core/secrets.js'

interface AdapterRow {
  id: string
  base_url: string
  username: string
  timeout_ms: number
  reject_unauthorized: boolean
  ca: string | null
  created_at: Date
  updated_at: Date
}

interface RelayRow extends AdapterRow {
  password_sealed: string
  revision: string
}

/** What the relay needs of an adapter: its settings, the password in clear and the row's revision. */
export interface RelayAdapter {
  id: string
  baseUrl: string
  username: string
  password: string
  timeoutMs: number
  rejectUnauthorized: boolean
  ca: string | null
  /** Changes on every update, and differs between an adapter and one re-created under its id. */
  revision: string
}

const COLUMNS = 'id, base_url, username, timeout_ms, reject_unauthorized, ca, created_at, updated_at'

function toAdapter (row: AdapterRow): Adapter {
  return {
    id: row.id,
    baseUrl: row.base_url,
    username: row.username,
    timeoutMs: row.timeout_ms,
    rejectUnauthorized: row.reject_unauthorized,
    ca: row.ca,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString()
  }
}

/** Orchestrator adapters table access; passwords go in sealed and come out only for the relay. */
export function adaptersRepository (db: Queryable, secrets: SecretSealer) {
  const sealer = {
    seal: secrets.seal,
    async open (sealed: string, adapterId: string): Promise<string> {
      try {
        return await secrets.open(sealed, adapterId)
      } catch (err) {
        if (!(err instanceof SecretKeyMismatch)) throw err
        throw new AdapterSecretUnreadable(adapterId, err.message, { cause: err })
      }
    }
  }
  return {
    /** A page of adapters, and how many match (see LIST_COUNT_LOOKAHEAD). */
    async list (request: ListRequest): Promise<{ items: Adapter[], total: number }> {
      // A CA bundle may take 256 KB: a page leaves the column out when the projection does.
      const columns = (request.projection.kind === 'include' && !request.projection.fields.has('ca')) ||
        (request.projection.kind === 'exclude' && request.projection.fields.has('ca'))
        ? COLUMNS.replace(', ca,', ', NULL AS ca,')
        : COLUMNS
      const { rows, total } = await readPage<AdapterRow>(db, listStatements(ADAPTER_LIST, request, { table: 'orchestrator_adapters', columns, arms: [[]], params: [] }), request)
      return { items: rows.map(toAdapter), total }
    },

    async get (id: string): Promise<Adapter | undefined> {
      const { rows } = await db.query<AdapterRow>(`SELECT ${COLUMNS} FROM orchestrator_adapters WHERE id = $1`, [id])
      return rows[0] === undefined ? undefined : toAdapter(rows[0])
    },

    /** Creates an adapter (`baseUrl` already checked); undefined when the id is taken. */
    async create (input: AdapterCreate): Promise<Adapter | undefined> {
      const sealed = await sealer.seal(input.password, input.id)
      const { rows } = await db.query<AdapterRow>(
        `INSERT INTO orchestrator_adapters (id, base_url, username, password_sealed, timeout_ms, reject_unauthorized, ca)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (id) DO NOTHING
         RETURNING ${COLUMNS}`,
        [input.id, input.baseUrl, input.username, sealed, input.timeoutMs ?? ADAPTER_DEFAULTS.timeoutMs,
          input.rejectUnauthorized ?? ADAPTER_DEFAULTS.rejectUnauthorized, input.ca ?? null])
      return rows[0] === undefined ? undefined : toAdapter(rows[0])
    },

    /** Changes the fields given (`baseUrl` already checked); `ca: null` removes the CA bundle. */
    async update (id: string, change: AdapterUpdate): Promise<Adapter | undefined> {
      const sealed = change.password === undefined ? null : await sealer.seal(change.password, id)
      const { rows } = await db.query<AdapterRow>(
        `UPDATE orchestrator_adapters SET
           base_url = COALESCE($2, base_url),
           username = COALESCE($3, username),
           password_sealed = COALESCE($4, password_sealed),
           timeout_ms = COALESCE($5, timeout_ms),
           reject_unauthorized = COALESCE($6, reject_unauthorized),
           ca = CASE WHEN $7 THEN $8 ELSE ca END,
           revision = nextval('orchestrator_adapter_revisions'),
           updated_at = now()
         WHERE id = $1
         RETURNING ${COLUMNS}`,
        [id, change.baseUrl ?? null, change.username ?? null, sealed, change.timeoutMs ?? null,
          change.rejectUnauthorized ?? null, change.ca !== undefined, change.ca ?? null])
      return rows[0] === undefined ? undefined : toAdapter(rows[0])
    },

    async remove (id: string): Promise<boolean> {
      const result = await db.query('DELETE FROM orchestrator_adapters WHERE id = $1', [id])
      return result.rowCount === 1
    },

    /** The adapter as the relay uses it, password decrypted; undefined when there is none. */
    async findForRelay (id: string): Promise<RelayAdapter | undefined> {
      const { rows } = await db.query<RelayRow>(
        `SELECT ${COLUMNS}, password_sealed, revision::text AS revision FROM orchestrator_adapters WHERE id = $1`, [id])
      const row = rows[0]
      if (row === undefined) return undefined
      return {
        id: row.id,
        baseUrl: row.base_url,
        username: row.username,
        password: await sealer.open(row.password_sealed, row.id),
        timeoutMs: row.timeout_ms,
        rejectUnauthorized: row.reject_unauthorized,
        ca: row.ca,
        revision: row.revision
      }
    }
  }
}

export type AdaptersRepository = ReturnType<typeof adaptersRepository>
