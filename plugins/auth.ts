import fp from 'fastify-plugin'
import basicAuth from '@fastify/basic-auth'
import rateLimit from '@fastify/rate-limit'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify'
import { basicUsername, parseBasicAuthorization } from '../lib/auth/basic-auth-header.js'
import { hookList } from '../lib/http/hook-list.js'
import { CredentialCache, recheckVerdict } from '../lib/auth/credential-cache.js'
import { HttpError, databaseUnavailable, isDatabaseUnavailable } from '../lib/http/errors.js'
import { generatePassword, hashPassword, verifyPassword } from '../lib/auth/passwords.js'
import { ErrorResponse, type Role as RoleSchema } from '../schemas/common.js'
import type { User } from '../schemas/users.js'
import type { LoginRecord } from './users-repository.js'

export type Role = Static<typeof RoleSchema>
export type AuthUser = Pick<User, 'username' | 'roles' | 'groups' | 'email'>

/** Roles that may write studio documents and Git projects. */
export const WRITERS: readonly Role[] = ['admin', 'designer', 'apiwrite']
export const ADMINS: readonly Role[] = ['admin']

export const REALM = 'netauto'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set on every route of an authenticated scope. */
    user: AuthUser
  }
  interface FastifyContextConfig {
    /** Roles allowed on this route (any one suffices; admin always may). Absent: any user. */
    roles?: readonly Role[]
  }
  interface FastifyInstance {
    /** An onRequest hook: Basic credentials required, and one of `roles` when given. */
    authorize: (roles?: readonly Role[]) => onRequestHookHandler
    /** Drops cached credentials of `username`; call it whenever that user changes. */
    forgetCredentials: (username: string) => void
  }
}

const unauthorized = (): HttpError => new HttpError(401, 'Missing or invalid credentials')

/** A credential that held: its user, and the digest of the stored hash its password matched. */
interface Verified {
  user: AuthUser
  checkedAgainst: string
}

export default fp(async (fastify) => {
  const users = fastify.usersRepository
  const cache = new CredentialCache<Verified>({ ttlMs: fastify.config.AUTH_CACHE_TTL_MS })
  // Verifying against this when the user does not exist costs the same as a real check, so the
  // response time does not tell which usernames exist.
  const dummyHash = await hashPassword(generatePassword())

  /**
   * Checks a password against the users table and remembers the user under `header` when it
   * holds; undefined when it does not. Throws only when the database cannot answer.
   */
  async function verify (header: string, username: string, password: string): Promise<AuthUser | undefined> {
    // Read before the user's row: a change of the user while this check runs voids its result.
    const generation = cache.generation(username)
    const record = await users.findForLogin(username)
    const valid = await verifyPassword(password, record?.passwordHash ?? dummyHash)
    if (record === undefined || !valid || record.user.disabled) return undefined
    return remember(header, record, generation)
  }

  /** Remembers `header` as a credential of the user in `record`, whose hash its password matched. */
  function remember (header: string, record: LoginRecord, generation: number): AuthUser {
    const { username, roles, groups, email } = record.user
    const user = { username, roles, groups, email }
    cache.set(header, username, { user, checkedAgainst: CredentialCache.key(record.passwordHash) }, generation)
    return user
  }

  // Called by @fastify/basic-auth with the parsed credentials when the cache did not know them.
  async function validate (username: string, password: string, request: FastifyRequest): Promise<void> {
    let user
    try {
      user = await verify(request.headers.authorization ?? '', username, password)
    } catch (err) {
      // @fastify/basic-auth turns an error without a status into a 401; an outage is not that.
      throw isDatabaseUnavailable(err) ? databaseUnavailable(err) : Object.assign(err as Error, { statusCode: 500 })
    }
    if (user === undefined) throw unauthorized()
    request.user = user
  }

  // A remembered credential past half its life is checked again beside the request that found it,
  // against its user's row as it is now: it stays (with the user's current roles and groups) while
  // the row holds the hash its password matched, which costs no password hash; a password set
  // again since is checked in full; a deleted or disabled user's is dropped. An outage leaves it
  // to expire as it would have.
  async function recheck (header: string, known: Verified): Promise<void> {
    const generation = cache.generation(known.user.username)
    const record = await users.findForLogin(known.user.username)
    const verdict = recheckVerdict(known.checkedAgainst, record)
    const password = verdict === 'verify' ? parseBasicAuthorization(header)?.password : undefined
    const holds = verdict === 'keep' || (password !== undefined && record !== undefined && await verifyPassword(password, record.passwordHash))
    if (holds && record !== undefined) remember(header, record, generation)
    else cache.drop(header)
  }
  function refresh (header: string, known: Verified): void {
    recheck(header, known).catch((err: unknown) => { fastify.log.warn({ err }, 'could not re-verify cached credentials') })
  }

  await fastify.register(basicAuth, { validate, authenticate: { realm: REALM } })

  fastify.decorateRequest('user', null as unknown as AuthUser)
  fastify.decorate('forgetCredentials', (username: string) => { cache.forget(username) })
  // Failed logins are counted per client address and username; past the limit, further attempts
  // are refused before any password check. Successes are never counted.
  await fastify.register(rateLimit, { global: false })
  const loginFailures = fastify.createRateLimit({
    max: fastify.config.LOGIN_FAILURES_MAX,
    timeWindow: fastify.config.LOGIN_FAILURES_WINDOW_MS,
    keyGenerator: (request) => `${request.ip}\u0000${basicUsername(request.headers.authorization)}`
  })

  async function login (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const limit = await loginFailures(request, { increment: false })
    if (!limit.isAllowed && limit.remaining === 0) {
      reply.header('retry-after', String(limit.ttlInSeconds))
      throw new HttpError(429, `Too many failed logins; retry in ${limit.ttlInSeconds} s`)
    }
    try {
      await new Promise<void>((resolve, reject) => {
        fastify.basicAuth(request, reply, (err?: Error) => { if (err === undefined) resolve(); else reject(err) })
      })
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 401) await loginFailures(request)
      throw err
    }
  }

  // Requests carrying a credential that is being verified right now wait for that verification
  // instead of each paying a password hash (many arrive at once when a cache entry expires).
  const verifying = new Map<string, Promise<void>>()

  /** Verifies the credentials of a request whose Authorization header the cache does not know. */
  async function authenticate (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization
    if (header === undefined) return await login(request, reply)
    const key = CredentialCache.key(header)
    const inFlight = verifying.get(key)
    if (inFlight !== undefined) {
      await inFlight.catch(() => {})
      const verified = cache.get(header)
      if (verified !== undefined) {
        request.user = verified.user
        return
      }
    }
    const attempt = login(request, reply)
    if (!verifying.has(key)) {
      verifying.set(key, attempt)
      attempt.then(() => verifying.delete(key), () => verifying.delete(key))
    }
    await attempt
  }

  fastify.decorate('authorize', function (allowed?: readonly Role[]): onRequestHookHandler {
    // Bound once per route: nothing about the route is looked up per request.
    const refusal = allowed === undefined ? '' : `This operation needs one of the roles: ${allowed.join(', ')}`
    const verdict = (user: AuthUser): HttpError | undefined =>
      allowed === undefined || user.roles.some((r) => r === 'admin' || allowed.includes(r)) ? undefined : new HttpError(403, refusal)
    return function authorize (request, reply, done) {
      // A credential verified moments ago is answered without a promise or a microtask: this is
      // the path of nearly every request of a working client.
      const header = request.headers.authorization
      const cached = header === undefined ? undefined : cache.lookup(header, request.raw.socket)
      if (cached !== undefined) {
        if (cached.refresh && header !== undefined) refresh(header, cached.value)
        request.user = cached.value.user
        done(verdict(cached.value.user))
        return
      }
      authenticate(request, reply).then(() => { done(verdict(request.user)) }, done)
    }
  })

  await bootstrapAdmin(fastify)
}, { name: 'auth', dependencies: ['config', 'users-repository'] })

/** On the first start (no user at all), creates the admin of ADMIN_USERNAME / ADMIN_PASSWORD. */
async function bootstrapAdmin (fastify: FastifyInstance): Promise<void> {
  const { ADMIN_USERNAME, ADMIN_PASSWORD } = fastify.config
  if (await fastify.usersRepository.count() > 0) return
  const password = ADMIN_PASSWORD ?? generatePassword()
  const created = await fastify.usersRepository.create(
    { username: ADMIN_USERNAME, password, roles: ['admin'], groups: [] }, { ifNoUsers: true })
  if (created === undefined) return // another instance made the first user meanwhile
  fastify.log.warn({ username: ADMIN_USERNAME }, 'created the bootstrap admin user')
  if (ADMIN_PASSWORD === undefined) {
    // Printed once, outside the (redacted) log, so the operator can log in and change it.
    process.stdout.write(`Generated password for the bootstrap admin "${ADMIN_USERNAME}": ${password}\n` +
      'Store it now: it is not shown again. Change it with PUT /users/' + ADMIN_USERNAME + '\n')
  }
}

/**
 * Makes every route registered in `scope` after this call require Basic credentials (and the
 * roles in its `config.roles`), and says so in the OpenAPI document.
 */
export function requireAuthentication (scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    const roles = route.config?.roles
    // After the hooks every route already has (load shedding): an overloaded process refuses a
    // request before it pays for a password check.
    route.onRequest = [...hookList(route.onRequest), scope.authorize(roles)]
    documentSecurity(route, roles)
  })
}

function documentSecurity (route: RouteOptions, roles: readonly Role[] | undefined): void {
  const schema = route.schema ?? {}
  const errors: Record<number, unknown> = { 401: Type.Ref(ErrorResponse) }
  if (roles !== undefined) errors[403] = Type.Ref(ErrorResponse)
  const note = roles === undefined ? 'Any authenticated user.' : `Roles: ${roles.join(', ')} (admin always may).`
  const description = typeof schema.description === 'string' ? `${schema.description}\n\n${note}` : note
  route.schema = {
    ...schema,
    description,
    security: [{ basicAuth: [] }],
    response: { ...errors, ...(schema.response as Record<number, unknown> | undefined) }
  }
}
