import type { Db } from '../database/index.js'
import type { User } from '../../schemas/users.js'
import { SERVICE_ACCOUNT_LIST, type ServiceAccount, type ServiceAccountUpdate } from '../../schemas/auth.js'
import { serviceAccountPrincipal } from '../../lib/auth/roles.js'
import type { ListRequest } from '../../lib/lists/grammar.js'
import { listStatements, readPage, listColumns, type ListSource } from '../../lib/lists/statements.js'
import { generateClientId, generateToken, tokenDigest } from '../../lib/auth/tokens.js'

/** What a token stands for: its user or service account as it is now, and the service account when it is an access token. */
export interface SessionRecord {
  user: Pick<User, 'username' | 'roles' | 'groups' | 'email'>
  clientId: string | null
  /** Milliseconds since the epoch. */
  expiresAt: number
}

interface SessionRow {
  username: string | null
  roles: string[]
  groups: string[]
  email: string | null
  client_id: string | null
  expires_at: Date
}

interface AccountRow {
  client_id: string
  name: string
  description: string
  roles: string[]
  groups: string[]
  created_by: string
  created_at: Date
  updated_by: string
  updated_at: Date
}

const toAccount = (row: AccountRow): ServiceAccount => ({
  client_id: row.client_id,
  name: row.name,
  description: row.description,
  roles: row.roles as ServiceAccount['roles'],
  groups: row.groups,
  _meta: {
    created: row.created_at.toISOString(),
    createdBy: { username: row.created_by },
    updated: row.updated_at.toISOString(),
    updatedBy: { username: row.updated_by }
  }
})

/** Live sessions kept per user and per service account; the oldest go first. */
export const MAX_SESSIONS = 100

const ACCOUNT_COLUMNS = 'client_id, name, description, roles, groups, created_by, created_at, updated_by, updated_at'

/** The service accounts as their list reads them (SERVICE_ACCOUNT_LIST): sorted by the primary key, the only unique column. */
export const SERVICE_ACCOUNT_SOURCE = {
  table: 'oauth_clients',
  columns: ACCOUNT_COLUMNS,
  ...listColumns(SERVICE_ACCOUNT_LIST, { sortable: { client_id: 'client_id' }, filterable: { name: 'name', description: 'description', client_id: 'client_id' } }),
  arms: [[]]
} satisfies ListSource

/** Sessions, access tokens and service accounts. */
export interface SessionsRepository {
  /**
   * Makes a token valid for `ttlS` seconds (fixed: using it does not extend it): a login session of
   * `username`, or (username null) an access token of the service account `clientId`.
   */
  create: (username: string | null, ttlS: number, clientId?: string | null) => Promise<{ token: string, expiresAt: number }>
  /**
   * The session of a token digest, with its user or service account as it is now, recording its
   * use; undefined when it is unknown, expired, or its user is disabled.
   */
  find: (digest: string) => Promise<SessionRecord | undefined>
  /** Ends one session; true when it existed. */
  end: (digest: string) => Promise<boolean>
  /** Makes a service account; its secret is in the answer only. */
  createServiceAccount: (account: { name: string, description: string, roles: string[], groups: string[] }, createdBy: string) => Promise<{ account: ServiceAccount, secret: string }>
  getServiceAccount: (clientId: string) => Promise<ServiceAccount | undefined>
  /** Changes what `updates` names; the account as it is now, or undefined when there is none. */
  updateServiceAccount: (clientId: string, updates: ServiceAccountUpdate, updatedBy: string) => Promise<ServiceAccount | undefined>
  /** A new secret for a service account, whose access tokens end with the old secret; undefined when there is no such account. */
  regenerateSecret: (clientId: string, updatedBy: string) => Promise<string | undefined>
  /** A page of service accounts, and how many match (see LIST_COUNT_LOOKAHEAD). */
  listServiceAccounts: (request: ListRequest) => Promise<{ items: ServiceAccount[], total: number }>
  /** A service account's secret digest, for a token request. */
  findClient: (clientId: string) => Promise<{ secretDigest: string } | undefined>
  /** Deletes a service account and its access tokens; false when there was none. */
  deleteServiceAccount: (clientId: string) => Promise<boolean>
}

/**
 * Sessions (login and OAuth access tokens) and OAuth clients; tokens and secrets are kept as
 * digests only. `changed` is called with the principal (a username, or a service account's
 * principal) whose session ended or whose account changed, once it is stored.
 */
export function sessionsRepository (db: Db, changed: (principal: string) => void = () => {}): SessionsRepository {
  return {
    /**
     * Makes a token valid for `ttlS` seconds (fixed: using it does not extend it): a login session of
     * `username`, or (username null) an access token of the service account `clientId`.
     */
    async create (username: string | null, ttlS: number, clientId: string | null = null): Promise<{ token: string, expiresAt: number }> {
      const token = generateToken()
      // A user keeps its newest MAX_SESSIONS sessions per client (a script that logs in on every
      // run cannot grow the table). The insert and the trim run in one transaction under a lock of
      // that user and client: parallel logins of one user wait for each other instead of deleting
      // the same rows in different orders (a deadlock), and the trim sees every earlier insert.
      const expiresAt = await db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`sessions ${JSON.stringify([username, clientId])}`])
        const { rows } = await tx.query<{ expires_at: Date }>(
          `INSERT INTO sessions (token_digest, username, client_id, expires_at)
           VALUES ($1, $2, $3, now() + make_interval(secs => $4))
           RETURNING expires_at`,
          [tokenDigest(token), username, clientId, ttlS])
        // The sessions of one owner: a user's login sessions, or one service account's tokens
        // (an index on either column; IS NOT DISTINCT FROM would use neither).
        const [owner, key] = clientId === null ? ['username = $1 AND client_id IS NULL', username] : ['client_id = $1', clientId]
        await tx.query(
          `DELETE FROM sessions WHERE token_digest IN (
             SELECT token_digest FROM sessions WHERE ${owner}
             ORDER BY created_at DESC, token_digest OFFSET $2)`,
          [key, MAX_SESSIONS])
        return rows[0]?.expires_at.getTime()
      })
      // Expired rows of anyone are removed as new ones come. Rows another transaction holds are
      // left to a later call: this statement never waits, so it takes part in no deadlock.
      await db.query(
        `DELETE FROM sessions WHERE token_digest IN (
           SELECT token_digest FROM sessions WHERE expires_at < now() FOR UPDATE SKIP LOCKED)`, [])
      return { token, expiresAt: expiresAt ?? Date.now() + ttlS * 1000 }
    },

    /**
     * The session of a token digest, with its user or service account as it is now, recording its
     * use; undefined when it is unknown, expired, or its user is disabled.
     */
    async find (digest: string): Promise<SessionRecord | undefined> {
      const { rows } = await db.query<SessionRow>(
        `WITH s AS (
           UPDATE sessions SET last_used_at = now()
           WHERE token_digest = $1 AND expires_at > now()
           RETURNING username, client_id, expires_at)
         SELECT u.username, u.roles, u.groups, u.email, s.client_id, s.expires_at
           FROM s JOIN users u ON u.username = s.username WHERE NOT u.disabled
         UNION ALL
         SELECT NULL, c.roles, c.groups, NULL, s.client_id, s.expires_at
           FROM s JOIN oauth_clients c ON c.client_id = s.client_id WHERE s.username IS NULL`,
        [digest])
      const row = rows[0]
      if (row === undefined) return undefined
      const username = row.username ?? serviceAccountPrincipal(row.client_id ?? '')
      return {
        user: { username, roles: row.roles as User['roles'], groups: row.groups, email: row.email },
        clientId: row.client_id,
        expiresAt: row.expires_at.getTime()
      }
    },

    /** Ends one session; true when it existed. */
    async end (digest: string): Promise<boolean> {
      const { rows } = await db.query<{ username: string | null, client_id: string | null }>(
        'DELETE FROM sessions WHERE token_digest = $1 RETURNING username, client_id', [digest])
      const row = rows[0]
      if (row === undefined) return false
      changed(row.username ?? serviceAccountPrincipal(row.client_id ?? ''))
      return true
    },

    /** Makes a service account; its secret is in the answer only. */
    async createServiceAccount (account: { name: string, description: string, roles: string[], groups: string[] }, createdBy: string): Promise<{ account: ServiceAccount, secret: string }> {
      const secret = generateToken()
      const { rows } = await db.query<AccountRow>(
        `INSERT INTO oauth_clients (client_id, secret_digest, name, description, roles, groups, created_by, updated_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING ${ACCOUNT_COLUMNS}`,
        [generateClientId(), tokenDigest(secret), account.name, account.description, account.roles, account.groups, createdBy])
      const row = rows[0]
      if (row === undefined) throw new Error('INSERT ... RETURNING returned no row')
      return { account: toAccount(row), secret }
    },

    async getServiceAccount (clientId: string): Promise<ServiceAccount | undefined> {
      const { rows } = await db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM oauth_clients WHERE client_id = $1`, [clientId])
      const row = rows[0]
      return row === undefined ? undefined : toAccount(row)
    },

    /** Changes what `updates` names; the account as it is now, or undefined when there is none. */
    async updateServiceAccount (clientId: string, updates: ServiceAccountUpdate, updatedBy: string): Promise<ServiceAccount | undefined> {
      const { rows } = await db.query<AccountRow>(
        `UPDATE oauth_clients SET name = COALESCE($2, name), description = COALESCE($3, description),
           roles = COALESCE($4, roles), groups = COALESCE($5, groups), updated_by = $6, updated_at = now()
         WHERE client_id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
        [clientId, updates.name ?? null, updates.description ?? null, updates.roles ?? null, updates.groups ?? null, updatedBy])
      const row = rows[0]
      if (row === undefined) return undefined
      changed(serviceAccountPrincipal(clientId))
      return toAccount(row)
    },

    /**
     * A new secret for a service account, whose access tokens end with the old secret (a secret is
     * regenerated when it may have leaked); undefined when there is no such account.
     */
    async regenerateSecret (clientId: string, updatedBy: string): Promise<string | undefined> {
      const secret = generateToken()
      const found = await db.transaction(async (tx) => {
        const { rowCount } = await tx.query(
          'UPDATE oauth_clients SET secret_digest = $2, updated_by = $3, updated_at = now() WHERE client_id = $1',
          [clientId, tokenDigest(secret), updatedBy])
        if (rowCount === 0) return false
        await tx.query('DELETE FROM sessions WHERE client_id = $1', [clientId])
        return true
      })
      if (!found) return undefined
      changed(serviceAccountPrincipal(clientId))
      return secret
    },

    /** A page of service accounts, and how many match (see LIST_COUNT_LOOKAHEAD). */
    async listServiceAccounts (request: ListRequest): Promise<{ items: ServiceAccount[], total: number }> {
      const { rows, total } = await readPage<AccountRow>(db, listStatements(request, SERVICE_ACCOUNT_SOURCE), request)
      return { items: rows.map(toAccount), total }
    },

    /** A service account's secret digest, for a token request. */
    async findClient (clientId: string): Promise<{ secretDigest: string } | undefined> {
      const { rows } = await db.query<{ secret_digest: string }>('SELECT secret_digest FROM oauth_clients WHERE client_id = $1', [clientId])
      const row = rows[0]
      return row === undefined ? undefined : { secretDigest: row.secret_digest }
    },

    /** Deletes a service account and its access tokens; false when there was none. */
    async deleteServiceAccount (clientId: string): Promise<boolean> {
      if ((await db.query('DELETE FROM oauth_clients WHERE client_id = $1', [clientId])).rowCount === 0) return false
      changed(serviceAccountPrincipal(clientId))
      return true
    }
  }
}
