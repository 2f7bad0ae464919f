import type { Db } from '../database/index.js'
import type { User } from '../../schemas/users.js'
import type { OAuthClient } from '../../schemas/auth.js'
import { OAUTH_CLIENT_LIST } from '../../schemas/auth.js'
import { listStatements, readPage, type ListRequest } from '../../lib/lists/list-query.js'
import { generateClientId, generateToken, tokenDigest } from '../../lib/auth/tokens.js'

/** What a token stands for: its user as it is now, and its client when it is an OAuth access token. */
export interface SessionRecord {
  user: Pick<User, 'username' | 'roles' | 'groups' | 'email'>
  clientId: string | null
  /** Milliseconds since the epoch. */
  expiresAt: number
}

interface SessionRow {
  username: string
  roles: string[]
  groups: string[]
  email: string | null
  client_id: string | null
  expires_at: Date
}

interface ClientRow {
  client_id: string
  username: string
  name: string
  created_by: string
  created_at: Date
}

const toClient = (row: ClientRow): OAuthClient => ({
  client_id: row.client_id,
  username: row.username,
  name: row.name,
  createdBy: row.created_by,
  createdAt: row.created_at.toISOString()
})

/** Live sessions kept per user and client (login sessions: no client); the oldest go first. */
export const MAX_SESSIONS = 100

const CLIENT_COLUMNS = 'client_id, username, name, created_by, created_at'

/** Sessions (login and OAuth access tokens) and OAuth clients; tokens and secrets are kept as digests only. */
export function sessionsRepository (db: Db) {
  return {
    /** Makes a token for `username` valid for `ttlS` seconds (fixed: using it does not extend it). */
    async create (username: string, ttlS: number, clientId: string | null = null): Promise<{ token: string, expiresAt: number }> {
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
        await tx.query(
          `DELETE FROM sessions WHERE token_digest IN (
             SELECT token_digest FROM sessions WHERE username = $1 AND client_id IS NOT DISTINCT FROM $2
             ORDER BY created_at DESC, token_digest OFFSET $3)`,
          [username, clientId, MAX_SESSIONS])
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
     * The session of a token digest, with its user as it is now, recording its use; undefined when
     * it is unknown, expired, or its user is disabled.
     */
    async find (digest: string): Promise<SessionRecord | undefined> {
      const { rows } = await db.query<SessionRow>(
        `UPDATE sessions s SET last_used_at = now()
         FROM users u
         WHERE s.token_digest = $1 AND u.username = s.username AND s.expires_at > now() AND NOT u.disabled
         RETURNING u.username, u.roles, u.groups, u.email, s.client_id, s.expires_at`,
        [digest])
      const row = rows[0]
      if (row === undefined) return undefined
      return {
        user: { username: row.username, roles: row.roles as User['roles'], groups: row.groups, email: row.email },
        clientId: row.client_id,
        expiresAt: row.expires_at.getTime()
      }
    },

    /** Ends one session; true when it existed. */
    async end (digest: string): Promise<boolean> {
      return (await db.query('DELETE FROM sessions WHERE token_digest = $1', [digest])).rowCount > 0
    },

    async createClient (username: string, name: string, createdBy: string): Promise<{ client: OAuthClient, secret: string }> {
      const secret = generateToken()
      const { rows } = await db.query<ClientRow>(
        `INSERT INTO oauth_clients (client_id, secret_digest, username, name, created_by)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${CLIENT_COLUMNS}`,
        [generateClientId(), tokenDigest(secret), username, name, createdBy])
      const row = rows[0]
      if (row === undefined) throw new Error('INSERT ... RETURNING returned no row')
      return { client: toClient(row), secret }
    },

    /** A page of OAuth clients, and how many match (see LIST_COUNT_LOOKAHEAD). */
    async listClients (request: ListRequest): Promise<{ items: OAuthClient[], total: number }> {
      const { rows, total } = await readPage<ClientRow>(db, listStatements(OAUTH_CLIENT_LIST, request, { table: 'oauth_clients', columns: CLIENT_COLUMNS, arms: [[]], params: [] }), request)
      return { items: rows.map(toClient), total }
    },

    /** A client's secret digest and its user's state, for a token request. */
    async findClient (clientId: string): Promise<{ secretDigest: string, username: string, disabled: boolean } | undefined> {
      const { rows } = await db.query<{ secret_digest: string, username: string, disabled: boolean }>(
        `SELECT c.secret_digest, c.username, u.disabled FROM oauth_clients c JOIN users u USING (username)
         WHERE c.client_id = $1`, [clientId])
      const row = rows[0]
      return row === undefined ? undefined : { secretDigest: row.secret_digest, username: row.username, disabled: row.disabled }
    },

    /** Deletes a client and its access tokens; its user's name, or undefined when there was none. */
    async deleteClient (clientId: string): Promise<string | undefined> {
      const { rows } = await db.query<{ username: string }>('DELETE FROM oauth_clients WHERE client_id = $1 RETURNING username', [clientId])
      return rows[0]?.username
    }
  }
}

export type SessionsRepository = ReturnType<typeof sessionsRepository>
