// Each user's own Git token per provider, sealed at rest with the key of adapter passwords
// (lib/secrets/secret-box.ts): written and removed through the API, read only to talk to the provider.
import type { Queryable } from '../database/index.js'
import type { SecretSealer } from '../core/secrets.js'
import { SecretKeyMismatch } from '../../lib/secrets/secret-box.js'
import { CredentialUnreadable } from '../../lib/git/errors.js'
import type { GitProvider } from '../../lib/git/providers.js'
import type { UserGitCredentials } from './transport.js'

export interface GitCredentialsStore {
  /** Stores (or replaces) `username`'s token for the provider. */
  set: (username: string, provider: GitProvider, credentials: { token: string, username?: string }) => Promise<void>
  /** Removes it; false when there was none. */
  remove: (username: string, provider: GitProvider) => Promise<boolean>
  get: (username: string, provider: GitProvider) => Promise<UserGitCredentials | undefined>
}

// The sealed value is bound to its user and provider: copied onto another row it does not open.
const context = (username: string, provider: GitProvider): string => `git-credential:${provider.name.toLowerCase()}:${username}`

export function gitCredentialsStore (db: Queryable, sealer: SecretSealer): GitCredentialsStore {
  return {
    async set (username, provider, credentials) {
      const sealed = await sealer.seal(credentials.token, context(username, provider))
      await db.query(`INSERT INTO git_credentials (username, provider, token_username, token_sealed) VALUES ($1, $2, $3, $4)
        ON CONFLICT (username, provider) DO UPDATE SET token_username = EXCLUDED.token_username,
          token_sealed = EXCLUDED.token_sealed, updated_at = now()`,
      [username, provider.name.toLowerCase(), credentials.username ?? null, sealed])
    },

    async remove (username, provider) {
      const { rowCount } = await db.query('DELETE FROM git_credentials WHERE username = $1 AND provider = $2', [username, provider.name.toLowerCase()])
      return rowCount > 0
    },

    async get (username, provider) {
      const { rows } = await db.query<{ token_username: string | null, token_sealed: string }>(
        'SELECT token_username, token_sealed FROM git_credentials WHERE username = $1 AND provider = $2', [username, provider.name.toLowerCase()])
      const row = rows[0]
      if (row === undefined) return undefined
      let opened: { secret: string, resealed?: string }
      try {
        opened = await sealer.unseal(row.token_sealed, context(username, provider))
      } catch (err) {
        if (!(err instanceof SecretKeyMismatch)) throw err
        throw new CredentialUnreadable(username, provider.name, { cause: err })
      }
      if (opened.resealed !== undefined) {
        // Sealed under a previous key: stored under the current one where the row still holds the
        // old value, so instances doing it at once do not fight and a token set meanwhile stays.
        await db.query('UPDATE git_credentials SET token_sealed = $4 WHERE username = $1 AND provider = $2 AND token_sealed = $3',
          [username, provider.name.toLowerCase(), row.token_sealed, opened.resealed])
      }
      const token = opened.secret
      return { owner: username, token, ...(row.token_username === null ? {} : { username: row.token_username }) }
    }
  }
}
