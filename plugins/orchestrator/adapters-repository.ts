// The adapters registry's table access: a plain factory, which plugins/orchestrator/index.ts decorates
// the instance with (fastify.adaptersRepository).
import type { Queryable } from '../database/index.js'
import { ADAPTER_DEFAULTS, ADAPTER_LIST, type Adapter, type AdapterCreate, type AdapterUpdate } from '../../schemas/orchestrator.js'
import type { ListRequest } from '../../lib/lists/grammar.js'
import { listStatements, readPage, listColumns, type ListSource } from '../../lib/lists/statements.js'
import { AdapterSecretUnreadable } from '../../lib/orchestrator/errors.js'
import { foldAdapterId } from '../../lib/orchestrator/adapter-id.js'
import { SecretKeyMismatch } from '../../lib/secrets/secret-box.js'
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

/** What `create` did: the adapter, or the id of the adapter that holds the id or a look-alike of it. */
export type CreateOutcome = { created: Adapter, taken?: undefined } | { created?: undefined, taken: string }

/** An adapter whose id folds to the key another adapter holds (created before keys existed). */
export interface LookAlike {
  id: string
  keyHeldBy: string
}

const isUniqueViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '23505'

const COLUMNS = 'id, base_url, username, timeout_ms, reject_unauthorized, ca, created_at, updated_at'

/** The adapters as their list reads them (ADAPTER_LIST): sorted by the primary key. */
const ADAPTER_SOURCE = {
  table: 'orchestrator_adapters',
  columns: COLUMNS,
  ...listColumns(ADAPTER_LIST, { sortable: { id: 'id' }, filterable: { id: 'id', baseUrl: 'base_url' } }),
  arms: [[]]
} satisfies ListSource

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

/** The service fastify.adaptersRepository: the adapters table. */
export interface AdaptersRepository {
  /** A page of adapters, and how many match. */
  list: (request: ListRequest) => Promise<{ items: Adapter[], total: number }>
  get: (id: string) => Promise<Adapter | undefined>
  create: (input: AdapterCreate) => Promise<CreateOutcome>
  /** Absent fields stay; undefined when there is no such adapter. */
  update: (id: string, change: AdapterUpdate) => Promise<Adapter | undefined>
  remove: (id: string) => Promise<boolean>
  /** Every adapter's id, in id order. */
  ids: () => Promise<string[]>
  /** An adapter's settings with its password in clear, for the orchestrator clients only. */
  findForRelay: (id: string) => Promise<RelayAdapter | undefined>
  /** Keys the adapters that have none; the look-alikes that could not get theirs. */
  claimKeys: () => Promise<LookAlike[]>
}

/**
 * Orchestrator adapters table access; passwords go in sealed and come out only for the relay.
 * `changed` is called with an adapter's id after each write to it, once it is stored: what is
 * remembered of it (settings, connections) is stale.
 */
export function adaptersRepository (db: Queryable, secrets: SecretSealer, changed: (id: string) => void = () => {}): AdaptersRepository {
  const sealer = {
    seal: secrets.seal,
    /**
     * The password in clear. One sealed under a previous key is stored sealed under the current
     * key, only where the row still holds the old value: instances doing it at once do not fight,
     * and a password changed meanwhile is not overwritten.
     */
    async open (sealed: string, adapterId: string): Promise<string> {
      let opened: { secret: string, resealed?: string }
      try {
        opened = await secrets.unseal(sealed, adapterId)
      } catch (err) {
        if (!(err instanceof SecretKeyMismatch)) throw err
        throw new AdapterSecretUnreadable(adapterId, err.message, { cause: err })
      }
      if (opened.resealed !== undefined) {
        await db.query('UPDATE orchestrator_adapters SET password_sealed = $3 WHERE id = $1 AND password_sealed = $2', [adapterId, sealed, opened.resealed])
      }
      return opened.secret
    }
  }

  /**
   * Gives every adapter without a key its key (migrations/011 keys ids of ASCII only; this folds
   * the others), oldest first. An adapter whose key another one already holds keeps none, stays
   * reachable by its exact id, and is returned, so that it can be logged.
   */
  async function claimKeys (): Promise<LookAlike[]> {
    const { rows } = await db.query<{ id: string }>('SELECT id FROM orchestrator_adapters WHERE id_key IS NULL ORDER BY created_at, id')
    const lookAlikes: LookAlike[] = []
    for (const { id } of rows) {
      const key = foldAdapterId(id)
      try {
        await db.query('UPDATE orchestrator_adapters SET id_key = $2 WHERE id = $1 AND id_key IS NULL AND NOT EXISTS ' +
          '(SELECT 1 FROM orchestrator_adapters WHERE id_key = $2)', [id, key])
      } catch (err) {
        // Another instance gave the key to another row at the same moment.
        if (!isUniqueViolation(err)) throw err
      }
      const { rows: holders } = await db.query<{ id: string }>('SELECT id FROM orchestrator_adapters WHERE id_key = $1', [key])
      const holder = holders[0]?.id
      if (holder !== undefined && holder !== id) lookAlikes.push({ id, keyHeldBy: holder })
    }
    return lookAlikes
  }

  return {
    /** A page of adapters, and how many match (see LIST_COUNT_LOOKAHEAD). */
    async list (request: ListRequest): Promise<{ items: Adapter[], total: number }> {
      // A CA bundle may take 256 KB: a page leaves the column out when the projection does.
      const columns = (request.projection.kind === 'include' && !request.projection.fields.has('ca')) ||
        (request.projection.kind === 'exclude' && request.projection.fields.has('ca'))
        ? COLUMNS.replace(', ca,', ', NULL AS ca,')
        : COLUMNS
      const { rows, total } = await readPage<AdapterRow>(db, listStatements(request, { ...ADAPTER_SOURCE, columns }), request)
      return { items: rows.map(toAdapter), total }
    },

    async get (id: string): Promise<Adapter | undefined> {
      const { rows } = await db.query<AdapterRow>(`SELECT ${COLUMNS} FROM orchestrator_adapters WHERE id = $1`, [id])
      return rows[0] === undefined ? undefined : toAdapter(rows[0])
    },

    /**
     * Creates an adapter (`baseUrl` already checked). Refused when the id, or a look-alike of it
     * (the same key, lib/orchestrator/adapter-id.ts), is taken: `taken` names the adapter that has it.
     */
    async create (input: AdapterCreate): Promise<CreateOutcome> {
      const key = foldAdapterId(input.id)
      const sealed = await sealer.seal(input.password, input.id)
      const { rows } = await db.query<AdapterRow>(
        `INSERT INTO orchestrator_adapters (id, id_key, base_url, username, password_sealed, timeout_ms, reject_unauthorized, ca)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT DO NOTHING
         RETURNING ${COLUMNS}`,
        [input.id, key, input.baseUrl, input.username, sealed, input.timeoutMs ?? ADAPTER_DEFAULTS.timeoutMs,
          input.rejectUnauthorized ?? ADAPTER_DEFAULTS.rejectUnauthorized, input.ca ?? null])
      if (rows[0] !== undefined) {
        changed(input.id)
        return { created: toAdapter(rows[0]) }
      }
      // The same id first; a holder deleted meanwhile still refuses this call (the conflict was real).
      const { rows: holders } = await db.query<{ id: string }>(
        'SELECT id FROM orchestrator_adapters WHERE id = $1 OR id_key = $2 ORDER BY id = $1 DESC LIMIT 1', [input.id, key])
      return { taken: holders[0]?.id ?? input.id }
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
      changed(id)
      return rows[0] === undefined ? undefined : toAdapter(rows[0])
    },

    /** Deletes adapter `id`; a look-alike left without a key (see `claimKeys`) may take its key. */
    async remove (id: string): Promise<boolean> {
      const result = await db.query('DELETE FROM orchestrator_adapters WHERE id = $1', [id])
      changed(id)
      if (result.rowCount === 1) await claimKeys()
      return result.rowCount === 1
    },

    claimKeys,

    /** Every adapter's id, in id order (the order the typed operations ask them in). */
    async ids (): Promise<string[]> {
      const { rows } = await db.query<{ id: string }>('SELECT id FROM orchestrator_adapters ORDER BY id')
      return rows.map((row) => row.id)
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
