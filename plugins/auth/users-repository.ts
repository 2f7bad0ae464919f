import type { Queryable } from '../database/index.js'
import type { User, UserCreate, UserUpdate } from '../../schemas/users.js'
import { USER_LIST } from '../../schemas/users.js'
import type { ListRequest } from '../../lib/lists/grammar.js'
import { listStatements, readPage, listColumns, type ListSource } from '../../lib/lists/statements.js'
import { hashPassword } from '../../lib/auth/passwords.js'
import { LastAdmin } from '../../lib/auth/errors.js'

interface UserRow {
  username: string
  password_hash: string
  roles: string[]
  groups: string[]
  email: string | null
  disabled: boolean
  created_at: Date
  updated_at: Date
}

export interface LoginRecord {
  user: User
  passwordHash: string
}

const COLUMNS = 'username, password_hash, roles, groups, email, disabled, created_at, updated_at'

/** The users as their list reads them (USER_LIST): sorted by the primary key. */
export const USER_SOURCE = {
  table: 'users',
  columns: COLUMNS,
  ...listColumns(USER_LIST, { sortable: { username: 'username' }, filterable: { username: 'username', email: 'email' } }),
  arms: [[]]
} satisfies ListSource

function toUser (row: UserRow): User {
  return {
    username: row.username,
    roles: row.roles as User['roles'],
    groups: row.groups,
    email: row.email,
    disabled: row.disabled,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString()
  }
}

/** The users table: every password goes in hashed and never comes out. */
export interface UsersRepository {
  /** The user with its password hash, for a login. */
  findForLogin: (username: string) => Promise<LoginRecord | undefined>
  /** A page of users, and how many match (see LIST_COUNT_LOOKAHEAD). */
  list: (request: ListRequest) => Promise<{ items: User[], total: number }>
  get: (username: string) => Promise<User | undefined>
  count: () => Promise<number>
  /** Creates a user; undefined when the username is taken, or (`ifNoUsers`) when any user exists. */
  create: (input: UserCreate, options?: { ifNoUsers?: boolean }) => Promise<User | undefined>
  /** Changes what `change` names; the user as it is now, or undefined when there is none. */
  update: (username: string, change: UserUpdate) => Promise<User | undefined>
  /** Deletes a user (and its sessions); false when there was none. */
  remove: (username: string) => Promise<boolean>
}

/**
 * Users table access; every password goes in hashed and never comes out. `changed` is called with
 * the username after each write to a user, once it is stored: what is remembered of it is stale.
 */
export function usersRepository (db: Queryable & { transaction: <T>(fn: (tx: Queryable) => Promise<T>) => Promise<T> }, changed: (username: string) => void = () => {}): UsersRepository {
  // Locks the enabled admins' rows so two concurrent changes cannot both remove "the other" admin.
  async function assertAnotherAdmin (tx: Queryable, username: string): Promise<void> {
    const { rows } = await tx.query<{ username: string }>(
      "SELECT username FROM users WHERE 'admin' = ANY(roles) AND NOT disabled FOR UPDATE")
    if (!rows.some((r) => r.username !== username)) throw new LastAdmin()
  }

  return {
    async findForLogin (username: string): Promise<LoginRecord | undefined> {
      const { rows } = await db.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE username = $1`, [username])
      const row = rows[0]
      return row === undefined ? undefined : { user: toUser(row), passwordHash: row.password_hash }
    },

    /** A page of users, and how many match (see LIST_COUNT_LOOKAHEAD). */
    async list (request: ListRequest): Promise<{ items: User[], total: number }> {
      const { rows, total } = await readPage<UserRow>(db, listStatements(request, USER_SOURCE), request)
      return { items: rows.map(toUser), total }
    },

    async get (username: string): Promise<User | undefined> {
      return (await this.findForLogin(username))?.user
    },

    async count (): Promise<number> {
      const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM users')
      return rows[0]?.n ?? 0
    },

    /** Creates a user; `false` when the username is taken. */
    async create (input: UserCreate, options: { ifNoUsers?: boolean } = {}): Promise<User | undefined> {
      const hash = await hashPassword(input.password)
      const guard = options.ifNoUsers === true ? 'WHERE NOT EXISTS (SELECT 1 FROM users)' : ''
      const { rows } = await db.query<UserRow>(
        `INSERT INTO users (username, password_hash, roles, groups, email, disabled)
         SELECT $1, $2, $3, $4, $5, $6 ${guard}
         ON CONFLICT (username) DO NOTHING
         RETURNING ${COLUMNS}`,
        [input.username, hash, input.roles ?? [], input.groups ?? [], input.email ?? null, input.disabled ?? false])
      return rows[0] === undefined ? undefined : toUser(rows[0])
    },

    async update (username: string, change: UserUpdate): Promise<User | undefined> {
      const hash = change.password === undefined ? null : await hashPassword(change.password)
      const user = await db.transaction(async (tx) => {
        const losesAdmin = change.disabled === true || (change.roles !== undefined && !change.roles.includes('admin'))
        if (losesAdmin) {
          const { rows } = await tx.query<{ admin: boolean }>(
            "SELECT 'admin' = ANY(roles) AND NOT disabled AS admin FROM users WHERE username = $1", [username])
          if (rows[0]?.admin === true) await assertAnotherAdmin(tx, username)
        }
        const { rows } = await tx.query<UserRow>(
          `UPDATE users SET
             password_hash = COALESCE($2, password_hash),
             roles = COALESCE($3, roles),
             groups = COALESCE($4, groups),
             email = CASE WHEN $5 THEN $6 ELSE email END,
             disabled = COALESCE($7, disabled),
             updated_at = now()
           WHERE username = $1
           RETURNING ${COLUMNS}`,
          [username, hash, change.roles ?? null, change.groups ?? null, change.email !== undefined, change.email ?? null, change.disabled ?? null])
        if (rows[0] === undefined) return undefined
        // A new password ends the user's login sessions; disabling ends its OAuth tokens too
        // (deleting the user ends everything, by the foreign keys).
        if (change.disabled === true) await tx.query('DELETE FROM sessions WHERE username = $1', [username])
        else if (change.password !== undefined) await tx.query('DELETE FROM sessions WHERE username = $1 AND client_id IS NULL', [username])
        return toUser(rows[0])
      })
      changed(username)
      return user
    },

    async remove (username: string): Promise<boolean> {
      const removed = await db.transaction(async (tx) => {
        const { rows } = await tx.query<{ admin: boolean }>(
          "SELECT 'admin' = ANY(roles) AND NOT disabled AS admin FROM users WHERE username = $1", [username])
        if (rows[0] === undefined) return false
        if (rows[0].admin) await assertAnotherAdmin(tx, username)
        const result = await tx.query('DELETE FROM users WHERE username = $1', [username])
        return result.rowCount === 1
      })
      changed(username)
      return removed
    }
  }
}
