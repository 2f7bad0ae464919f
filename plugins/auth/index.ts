import fp from 'fastify-plugin'
import cookie from '@fastify/cookie'
import type { onRequestHookHandler } from 'fastify'
import type { AuthUser, RequestAuth, Role } from '../../lib/auth/roles.js'
import { toAuthUser } from '../../lib/auth/roles.js'
import type { LoginGuard } from '../../lib/auth/login-guard.js'
import type { GuardedRoute } from '../../lib/auth/platform-methods.js'
import type { SharedFailureCounts } from '../../lib/auth/shared-failure-counts.js'
import { usersRepository, type UsersRepository } from './users-repository.js'
import { sessionsRepository, type SessionsRepository } from './sessions-repository.js'
import { loginThrottle } from './login-throttle.js'
import { credentials, type BasicCredentials } from './credentials.js'
import { rememberedCredentials } from './remembered-credentials.js'
import { authorizer, requireAuthentication } from './authorize.js'
import { bootstrapAdmin } from './bootstrap-admin.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The authenticated caller: set on every route of an authenticated scope (see
     * `requireAuthentication`; `callerOf` reads it there), null elsewhere.
     */
    user: AuthUser | null
    /** How it authenticated; set with `user`, null elsewhere. */
    auth: RequestAuth | null
  }
  interface FastifyContextConfig {
    /** Roles allowed on this route (any one suffices; admin always may). Absent: any user. */
    roles?: readonly Role[]
    /** A GET that changes state (GET /logout): with the session cookie, it gets a write's origin check. */
    changesState?: boolean
  }
  interface FastifyInstance {
    usersRepository: UsersRepository
    sessionsRepository: SessionsRepository
    /** An onRequest hook: credentials (Basic, or a token) required, and one of `roles` when given. */
    authorize: (roles?: readonly Role[]) => onRequestHookHandler
    /**
     * Makes every route registered in `scope` after this call require credentials and the roles
     * in its `config.roles`, and says so in the OpenAPI document.
     */
    requireAuthentication: (scope: FastifyInstance) => void
    /**
     * Drops what this instance remembers of `username`'s credentials and tokens. The repositories'
     * writes call it themselves; for a change made outside them (another instance, a test).
     */
    forgetCredentials: (username: string) => void
    /**
     * The HTTP Basic credentials of a request's Authorization header, read as its authentication
     * reads them (by @fastify/basic-auth), nothing verified: for the places that read the header
     * outside a request's authentication. Undefined when the header holds no Basic credentials.
     */
    readBasicCredentials: (request: FastifyRequest, reply: FastifyReply) => BasicCredentials | undefined
    /**
     * Checks a username and password as every login does (throttled, through the bounded line of
     * password checks): the user when they hold, undefined when not; throws a 429 or 503 HttpError.
     */
    checkPassword: (address: string, username: string, password: string) => Promise<AuthUser | undefined>
    /**
     * Runs `check` (a cheap comparison of a secret) under the failure counts of `subject` and the
     * client address; `fingerprint` stands for the secret. Throws a 429 HttpError past the limit,
     * a 503 when the deployment's counts cannot be reached.
     */
    guardedCheck: (address: string, subject: string, fingerprint: string, stored: string, check: () => boolean) => Promise<boolean>
    loginGuard: LoginGuard
    /** The failed-login counts shared by every instance (statements sent, for metrics and tests). */
    sharedLoginCounts: SharedFailureCounts
    /** Password checks run since start, for metrics and tests. */
    passwordChecks: () => number
    /** Every route of the authenticated scopes with the roles it needs, as they are registered (whoami reads it). */
    guardedRoutes: GuardedRoute[]
  }
}

/**
 * Users, sessions and who sends each request: the repositories, the login throttle
 * (login-throttle.ts), what is remembered of verified credentials (remembered-credentials.ts),
 * the identification of the caller (credentials.ts), the role check
 * (authorize.ts) and, on the first start, the bootstrap admin.
 */
export default fp(async (fastify) => {
  // Each write to a user, a session or a service account drops what this instance remembers of
  // its credentials and tokens: the repositories say whose, the credentials (made below) forget.
  let forget = (_principal: string): void => {}
  const changed = (principal: string): void => { forget(principal) }
  const users = usersRepository(fastify.db, changed)
  const sessions = sessionsRepository(fastify.db, changed)
  fastify.decorate('usersRepository', users)
  fastify.decorate('sessionsRepository', sessions)

  const throttle = await loginThrottle(fastify.config, users, fastify.db, fastify.log)
  fastify.decorate('loginGuard', throttle.guard)
  fastify.decorate('sharedLoginCounts', throttle.shared)
  fastify.decorate('passwordChecks', throttle.passwordChecks)
  fastify.decorate('guardedCheck', throttle.guardedCheck)
  fastify.decorate('checkPassword', async (address: string, username: string, password: string) => {
    const record = await throttle.checkPassword(address, username, password)
    return record === undefined ? undefined : toAuthUser(record.user)
  })

  await fastify.register(cookie, { hook: false })
  fastify.decorateRequest('user', null)
  fastify.decorateRequest('auth', null)
  const memory = rememberedCredentials({
    ttlMs: fastify.config.AUTH_CACHE_TTL_MS,
    tokenTtlMs: fastify.config.TOKEN_CACHE_TTL_MS,
    users,
    sessions,
    recheckPassword: throttle.recheckPassword,
    log: fastify.log
  })
  forget = memory.forget
  fastify.decorate('forgetCredentials', memory.forget)
  const identification = await credentials(fastify, sessions, throttle, memory)
  fastify.decorate('readBasicCredentials', identification.readBasic)
  fastify.decorate('authorize', authorizer(identification))
  fastify.decorate('requireAuthentication', requireAuthentication)
  fastify.decorate('guardedRoutes', [] as GuardedRoute[])

  await bootstrapAdmin(fastify)
}, { name: 'auth', dependencies: ['config', 'database'] })
