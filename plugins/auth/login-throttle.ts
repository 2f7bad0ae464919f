import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../core/config.js'
import { LoginGuard, countKey, type Ticket } from '../../lib/auth/login-guard.js'
import { CountsBusy, SharedFailureCounts } from '../../lib/auth/shared-failure-counts.js'
import { deriveSubkey } from '../../lib/secrets/secret-box.js'
import { keySettings, type KeyVariables } from '../../lib/secrets/key-settings.js'
import { databaseUnavailable } from '../../lib/http/errors.js'
import type { Queryable } from '../database/index.js'
import { loginFailuresRepository, SWEEP_BATCH } from './login-failures-repository.js'
import { CheckQueue, QueueFull } from '../../lib/auth/check-queue.js'
import { generatePassword, hashPassword, verifyPassword } from '../../lib/auth/passwords.js'
import { CredentialCache } from '../../lib/auth/credential-cache.js'
import { loginBusy, tooManyFailedLogins } from '../../lib/auth/errors.js'
import { UserObject } from '../../schemas/users.js'
import type { LoginRecord, UsersRepository } from './users-repository.js'

const USERNAME = new RegExp(UserObject.properties.username.pattern ?? '')
const USERNAME_MAX = UserObject.properties.username.maxLength ?? 64

/** Every check of a password or client secret: throttled per address and subject, hashes run a few at a time. */
export interface LoginThrottle {
  guard: LoginGuard
  /** The counts every instance shares, through the database. */
  shared: SharedFailureCounts
  /**
   * Checks a username and password as every login does: the user's record when they hold and the
   * user is enabled, undefined when not; throws a 429 past the failure limit, a 503 when the line
   * of password checks is full.
   */
  checkPassword: (address: string, username: string, password: string) => Promise<LoginRecord | undefined>
  /**
   * Runs `check` (a cheap comparison of a secret) under the failure counts of `subject` and the
   * client address; `fingerprint` stands for the secret. Throws a 429 past the limit, a 503 when
   * the counts cannot be reached.
   */
  guardedCheck: (address: string, subject: string, fingerprint: string, stored: string, check: () => boolean) => Promise<boolean>
  /** Verifies a remembered credential again through the line of checks (throws QueueFull when it is full); not counted. */
  recheckPassword: (password: string, passwordHash: string) => Promise<boolean>
  /** Password checks run since start. */
  passwordChecks: () => number
}

type ThrottleConfig = KeyVariables & Pick<Config, 'LOGIN_SHARED_PENDING_KEYS' | 'ADMIN_USERNAME' | 'LOGIN_FAILURES_MAX' | 'LOGIN_ADDRESS_FAILURES_MAX' | 'LOGIN_FAILURES_WINDOW_MS' |
'LOGIN_GUARD_MAX_ENTRIES' | 'PASSWORD_CHECK_CONCURRENCY' | 'PASSWORD_CHECK_QUEUE'>

export async function loginThrottle (config: ThrottleConfig, users: UsersRepository, db: Queryable, log: FastifyBaseLogger): Promise<LoginThrottle> {
  const guard = new LoginGuard({
    max: config.LOGIN_FAILURES_MAX,
    maxPerAddress: config.LOGIN_ADDRESS_FAILURES_MAX,
    windowMs: config.LOGIN_FAILURES_WINDOW_MS,
    maxEntries: config.LOGIN_GUARD_MAX_ENTRIES
  })
  // The keys of the shared counts are HMACs every instance with the same SECRET_KEY makes alike;
  // without it (one instance, the embedded database) a key of this process will do.
  const secret = keySettings(config).secret
  const sharedKey = secret === undefined ? randomBytes(32) : deriveSubkey(secret, 'login-failures')
  const repository = loginFailuresRepository(db, config.LOGIN_FAILURES_WINDOW_MS)
  let lastSweep = -Infinity
  const shared = new SharedFailureCounts({
    maxPendingKeys: config.LOGIN_SHARED_PENDING_KEYS,
    maxBlocked: config.LOGIN_GUARD_MAX_ENTRIES,
    apply: async (reserve, giveBack) => {
      const counts = await repository.apply(reserve, giveBack)
      // Ended windows go a small batch at a time, once a window, and again at once while batches come back full.
      if (performance.now() - lastSweep >= config.LOGIN_FAILURES_WINDOW_MS) {
        lastSweep = performance.now()
        const swept = await repository.sweep().catch((err: unknown) => { log.warn({ err }, 'could not sweep ended failed-login windows'); return 0 })
        if (swept === SWEEP_BATCH) lastSweep = -Infinity
      }
      return counts
    }
  })
  const queue = new CheckQueue({ concurrency: config.PASSWORD_CHECK_CONCURRENCY, maxWaiting: config.PASSWORD_CHECK_QUEUE })
  // Verifying against this when the user does not exist costs the same as a real check, so the
  // response time does not tell which usernames exist.
  const dummyHash = await hashPassword(generatePassword())

  // A place in this instance's counts, then in the deployment's. The database unreachable: the
  // check is refused (503), not let through uncounted; credentials known good need no place.
  async function reserve (address: string, subject: string, fingerprint: string): Promise<Ticket | undefined> {
    if (guard.isKnownGood(fingerprint)) return undefined
    const reservation = guard.reserve(LoginGuard.keys(address, subject))
    if (!reservation.ok) throw tooManyFailedLogins(reservation.retryAfterS)
    const local = reservation.ticket
    let deployment
    try {
      deployment = await shared.reserve([
        { key: countKey(sharedKey, 'a', address), max: config.LOGIN_ADDRESS_FAILURES_MAX },
        { key: countKey(sharedKey, 's', address, subject), max: config.LOGIN_FAILURES_MAX }
      ])
    } catch (err) {
      local.cancel()
      if (err instanceof CountsBusy) throw loginBusy()
      log.warn({ err }, 'could not count a login in the shared failed-login counts')
      throw databaseUnavailable(err)
    }
    if (!deployment.ok) {
      local.cancel()
      throw tooManyFailedLogins(deployment.retryAfterS)
    }
    const { release } = deployment
    return {
      succeed: () => { local.succeed(); release() },
      fail: () => { local.fail() },
      cancel: () => { local.cancel(); release() }
    }
  }

  // A username no user can have (users are made under the rules of schemas/users.ts; the bootstrap
  // admin under ADMIN_USERNAME) is refused at once: nothing to look up, nothing to count or keep.
  function possibleUsername (username: string): boolean {
    return (username.length <= USERNAME_MAX && USERNAME.test(username)) || username === config.ADMIN_USERNAME
  }

  async function checkPassword (address: string, username: string, password: string): Promise<LoginRecord | undefined> {
    if (!possibleUsername(username)) return undefined
    const fingerprint = guard.fingerprint(`u:${username}`, password)
    const record = await users.findForLogin(username)
    const stored = record === undefined ? '' : CredentialCache.key(record.passwordHash)
    // The same wrong password against the same hash: known to fail, neither checked nor counted.
    if (guard.isKnownBad(fingerprint, stored)) return undefined
    const known = guard.isKnownGood(fingerprint)
    const ticket = await reserve(address, `u:${username}`, fingerprint)
    let valid: boolean
    try {
      valid = await queue.run(async () => await verifyPassword(password, record?.passwordHash ?? dummyHash), { priority: known })
    } catch (err) {
      ticket?.cancel()
      throw err instanceof QueueFull ? loginBusy() : err
    }
    if (valid && record !== undefined && !record.user.disabled) {
      ticket?.succeed()
      guard.rememberGood(fingerprint)
      return record
    }
    ticket?.fail()
    if (!valid) guard.rememberBad(fingerprint, stored)
    return undefined
  }

  async function guardedCheck (address: string, subject: string, fingerprint: string, stored: string, check: () => boolean): Promise<boolean> {
    if (guard.isKnownBad(fingerprint, stored)) return false
    const ticket = await reserve(address, subject, fingerprint)
    if (check()) {
      ticket?.succeed()
      guard.rememberGood(fingerprint)
      return true
    }
    ticket?.fail()
    guard.rememberBad(fingerprint, stored)
    return false
  }

  return {
    guard,
    shared,
    checkPassword,
    guardedCheck,
    recheckPassword: async (password, passwordHash) => await queue.run(async () => await verifyPassword(password, passwordHash)),
    passwordChecks: () => queue.started
  }
}
