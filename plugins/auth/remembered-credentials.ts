import type { FastifyBaseLogger } from 'fastify'
import { CredentialCache, recheckVerdict } from '../../lib/auth/credential-cache.js'
import { QueueFull } from '../../lib/auth/check-queue.js'
import { toAuthUser, type AuthUser, type RequestAuth } from '../../lib/auth/roles.js'
import type { LoginRecord, UsersRepository } from './users-repository.js'
import type { SessionRecord, SessionsRepository } from './sessions-repository.js'

/** A credential verified moments ago: the caller it identified and how. */
export type Known =
  | { kind: 'basic', user: AuthUser, auth: RequestAuth, checkedAgainst: string }
  | { kind: 'token', user: AuthUser, auth: RequestAuth }

/**
 * A mark of the moment a verification began: what it read is remembered only when nothing it
 * could have read changed since (see `since`).
 */
export interface Since { readonly generation: number, readonly epoch: number }

/**
 * What this instance remembers of verified credentials, so that a request does not pay a password
 * hash or a database read: Basic credentials keyed by the Authorization header, tokens keyed by
 * how they came. Entries past half their life are checked again in the background; a change of a
 * user drops its entries (`forget`).
 */
export interface RememberedCredentials {
  /**
   * What `key` was verified as, or undefined. Past half the entry's life it is checked again
   * beside the request that found it: `basicPassword` gives the password of a Basic credential
   * then (read from the request at hand; the password itself is never kept). `connection` (the
   * request's socket) lets a connection that sends the same credential skip digesting it.
   */
  recall: (key: string, basicPassword: () => string | undefined, connection?: object) => Known | undefined
  /** Marks the start of a verification of `username`'s credentials (or a token's, whose user is not known yet). */
  since: (username?: string) => Since
  /** Remembers `key` as Basic credentials of `record`'s user, whose hash its password matched; not when the user changed `since`. */
  rememberBasic: (key: string, record: LoginRecord, since: Since) => Known
  /** Remembers `key` as a token of `record`, at most until it expires; not when any user changed `since`. */
  rememberToken: (key: string, auth: RequestAuth, record: SessionRecord, since: Since) => Known
  /** Drops what is remembered of `username`'s credentials and tokens. */
  forget: (username: string) => void
}

export interface RememberedCredentialsOptions {
  /** How long verified Basic credentials are remembered (AUTH_CACHE_TTL_MS). */
  ttlMs: number
  /** How long a token is remembered at most (TOKEN_CACHE_TTL_MS). */
  tokenTtlMs: number
  users: UsersRepository
  sessions: SessionsRepository
  /** A full password check for a re-check, through the bounded line of password checks. */
  recheckPassword: (password: string, passwordHash: string) => Promise<boolean>
  log: FastifyBaseLogger
}

export function rememberedCredentials (options: RememberedCredentialsOptions): RememberedCredentials {
  const { users, sessions, recheckPassword, log } = options
  const cache = new CredentialCache<Known>({ ttlMs: options.ttlMs })
  // Grows on every forget: a token read from the database before a change of its user is not kept.
  let epoch = 0
  const since = (username?: string): Since => ({ generation: username === undefined ? 0 : cache.generation(username), epoch })

  function rememberBasic (key: string, record: LoginRecord, started: Since): Known {
    const known: Known = { kind: 'basic', user: toAuthUser(record.user), auth: { method: 'basic' }, checkedAgainst: CredentialCache.key(record.passwordHash) }
    cache.set(key, record.user.username, known, started.generation)
    return known
  }

  function rememberToken (key: string, auth: RequestAuth, record: SessionRecord, started: Since): Known {
    const known: Known = { kind: 'token', user: record.user, auth: record.clientId === null ? auth : { ...auth, clientId: record.clientId } }
    // Never past the token's own expiry; at most TOKEN_CACHE_TTL_MS, so a token revoked through
    // another instance stops working here within that time.
    if (started.epoch === epoch) {
      cache.set(key, record.user.username, known, cache.generation(record.user.username), Math.min(options.tokenTtlMs, record.expiresAt - Date.now()))
    }
    return known
  }

  // A remembered credential past half its life is checked again beside the request that found it,
  // against its user's row as it is now: it stays (with the user's current roles and groups) while
  // the row holds the hash its password matched, which costs no password hash; a password set
  // again since is checked in full (through the line of checks, given up when it is full); a
  // deleted or disabled user's is dropped. A token is read again from the database. An outage
  // leaves the entry to expire as it would have.
  async function recheck (key: string, known: Known, basicPassword: () => string | undefined): Promise<void> {
    if (known.kind === 'token') {
      const started = since()
      const record = await sessions.find(known.auth.tokenDigest ?? '')
      if (record === undefined) cache.drop(key)
      else rememberToken(key, known.auth, record, started)
      return
    }
    const started = since(known.user.username)
    // Read now, while the request that carries it is at hand.
    const password = basicPassword()
    const record = await users.findForLogin(known.user.username)
    const verdict = recheckVerdict(known.checkedAgainst, record)
    const holds = verdict === 'keep' || (verdict === 'verify' && password !== undefined && record !== undefined &&
      await recheckPassword(password, record.passwordHash))
    if (holds && record !== undefined) rememberBasic(key, record, started)
    else cache.drop(key)
  }

  return {
    recall (key, basicPassword, connection) {
      const found = cache.lookup(key, connection)
      if (found === undefined) return undefined
      if (found.refresh) {
        recheck(key, found.value, basicPassword).catch((err: unknown) => {
          if (!(err instanceof QueueFull)) log.warn({ err }, 'could not re-verify cached credentials')
        })
      }
      return found.value
    },
    since,
    rememberBasic,
    rememberToken,
    forget (username) {
      epoch++
      cache.forget(username)
    }
  }
}
