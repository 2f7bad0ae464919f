import fp from 'fastify-plugin'
import basicAuth from '@fastify/basic-auth'
import cookie from '@fastify/cookie'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify'
import { parseBasicAuthorization } from '../../lib/auth/basic-auth-header.js'
import { hookList } from '../../lib/http/hook-list.js'
import { CredentialCache, recheckVerdict } from '../../lib/auth/credential-cache.js'
import { HttpError, databaseUnavailable, isDatabaseUnavailable } from '../../lib/http/errors.js'
import { generatePassword, hashPassword, verifyPassword } from '../../lib/auth/passwords.js'
import { LoginGuard, type Ticket } from '../../lib/auth/login-guard.js'
import { CheckQueue, QueueFull } from '../../lib/auth/check-queue.js'
import { isWellFormedToken, tokenDigest } from '../../lib/auth/tokens.js'
import { ErrorResponse, type Role as RoleSchema } from '../../schemas/common.js'
import type { User } from '../../schemas/users.js'
import type { AuthMethod } from '../../schemas/auth.js'
import type { LoginRecord } from './users-repository.js'
import type { SessionRecord } from './sessions-repository.js'

export type Role = Static<typeof RoleSchema>
export type AuthUser = Pick<User, 'username' | 'roles' | 'groups' | 'email'>

/** How the caller of a request authenticated. */
export interface RequestAuth {
  method: AuthMethod
  /** The digest of the session or access token, when a token was used. */
  tokenDigest?: string
  /** The OAuth client the token was issued to. */
  clientId?: string
}

/** Writes studio documents and Git projects. */
export const WRITERS: readonly Role[] = ['admin', 'designer', 'apiwrite']
export const ADMINS: readonly Role[] = ['admin']

export const REALM = 'netauto'
/** The cookie that carries a session token (the platform's clients read and send this name). */
export const TOKEN_COOKIE = 'token'
const BASIC_CHALLENGE = `Basic realm="${REALM}"`
// Cache keys of tokens that came as a query parameter or cookie: a NUL, which no header value
// holds, keeps them apart from Authorization header values (the keys of Basic and Bearer).
const QUERY_KEY = '\u0000query '
const COOKIE_KEY = '\u0000cookie '
const TOKEN_CHALLENGE = `${BASIC_CHALLENGE}, Bearer realm="${REALM}", error="invalid_token"`

/** The OpenAPI security requirement of every authenticated route: any one of these. */
export const SECURITY: Array<Record<string, string[]>> = [{ basicAuth: [] }, { bearerAuth: [] }, { cookieAuth: [] }, { queryToken: [] }]

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set on every route of an authenticated scope. */
    user: AuthUser
    /** How it authenticated; set with `user`. */
    auth: RequestAuth
  }
  interface FastifyContextConfig {
    /** Roles allowed on this route (any one suffices; admin always may). Absent: any user. */
    roles?: readonly Role[]
  }
  interface FastifyInstance {
    /** An onRequest hook: credentials (Basic, or a token) required, and one of `roles` when given. */
    authorize: (roles?: readonly Role[]) => onRequestHookHandler
    /** Drops what this instance remembers of `username`'s credentials and tokens; call it whenever that user changes. */
    forgetCredentials: (username: string) => void
    /**
     * Checks a username and password as every login does (throttled, through the bounded line of
     * password checks): the user when they hold, undefined when not; throws a 429 or 503 HttpError.
     */
    checkPassword: (address: string, username: string, password: string) => Promise<AuthUser | undefined>
    /**
     * Runs `check` (a cheap comparison of a secret) under the failure counts of `subject` and the
     * client address; `fingerprint` stands for the secret. Throws a 429 HttpError past the limit.
     */
    guardedCheck: (address: string, subject: string, fingerprint: string, stored: string, check: () => boolean) => boolean
    loginGuard: LoginGuard
    /** Password checks run since start, for metrics and tests. */
    passwordChecks: () => number
  }
}

const unauthorized = (): HttpError => new HttpError(401, 'Missing or invalid credentials')

type Known =
  | { kind: 'basic', user: AuthUser, auth: RequestAuth, checkedAgainst: string }
  | { kind: 'token', user: AuthUser, auth: RequestAuth }

export default fp(async (fastify) => {
  const users = fastify.usersRepository
  const sessions = fastify.sessionsRepository
  const config = fastify.config
  // Basic credentials (keyed by the Authorization header) and tokens (keyed by how they came) alike.
  const cache = new CredentialCache<Known>({ ttlMs: config.AUTH_CACHE_TTL_MS })
  const tokenTtlMs = config.TOKEN_CACHE_TTL_MS
  const guard = new LoginGuard({
    max: config.LOGIN_FAILURES_MAX,
    maxPerAddress: config.LOGIN_ADDRESS_FAILURES_MAX,
    windowMs: config.LOGIN_FAILURES_WINDOW_MS
  })
  const queue = new CheckQueue({ concurrency: config.PASSWORD_CHECK_CONCURRENCY, maxWaiting: config.PASSWORD_CHECK_QUEUE })
  // Verifying against this when the user does not exist costs the same as a real check, so the
  // response time does not tell which usernames exist.
  const dummyHash = await hashPassword(generatePassword())
  // Grows on every forget: a token read from the database before a change of its user is not kept.
  let epoch = 0

  await fastify.register(cookie, { hook: false })
  fastify.decorateRequest('user', null as unknown as AuthUser)
  fastify.decorateRequest('auth', null as unknown as RequestAuth)
  fastify.decorate('loginGuard', guard)
  fastify.decorate('passwordChecks', () => queue.started)
  fastify.decorate('forgetCredentials', (username: string) => {
    epoch++
    cache.forget(username)
  })

  const tooMany = (retryAfterS: number): HttpError =>
    new HttpError(429, `Too many failed logins; retry in ${retryAfterS} s`, { details: { retryAfter: retryAfterS } })
  const busy = (): HttpError =>
    new HttpError(503, 'Too many logins are being checked; retry in a moment', { code: 'LOGIN_BUSY', details: { retryAfter: 1 } })

  function reserve (address: string, subject: string, fingerprint: string): Ticket | undefined {
    if (guard.isKnownGood(fingerprint)) return undefined
    const reservation = guard.reserve(LoginGuard.keys(address, subject))
    if (!reservation.ok) throw tooMany(reservation.retryAfterS)
    return reservation.ticket
  }

  async function checkPassword (address: string, username: string, password: string): Promise<LoginRecord | undefined> {
    const fingerprint = guard.fingerprint(`u:${username}`, password)
    const record = await users.findForLogin(username)
    const stored = record === undefined ? '' : CredentialCache.key(record.passwordHash)
    // The same wrong password against the same hash: known to fail, neither checked nor counted.
    if (guard.isKnownBad(fingerprint, stored)) return undefined
    const known = guard.isKnownGood(fingerprint)
    const ticket = reserve(address, `u:${username}`, fingerprint)
    let valid: boolean
    try {
      valid = await queue.run(async () => await verifyPassword(password, record?.passwordHash ?? dummyHash), { priority: known })
    } catch (err) {
      ticket?.cancel()
      throw err instanceof QueueFull ? busy() : err
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

  fastify.decorate('checkPassword', async (address: string, username: string, password: string) => {
    const record = await checkPassword(address, username, password)
    return record === undefined ? undefined : toAuthUser(record.user)
  })

  fastify.decorate('guardedCheck', (address: string, subject: string, fingerprint: string, stored: string, check: () => boolean): boolean => {
    if (guard.isKnownBad(fingerprint, stored)) return false
    const ticket = reserve(address, subject, fingerprint)
    if (check()) {
      ticket?.succeed()
      guard.rememberGood(fingerprint)
      return true
    }
    ticket?.fail()
    guard.rememberBad(fingerprint, stored)
    return false
  })

  /** Remembers `header` as a credential of the user in `record`, whose hash its password matched. */
  function remember (header: string, record: LoginRecord, generation: number): Known {
    const known: Known = { kind: 'basic', user: toAuthUser(record.user), auth: { method: 'basic' }, checkedAgainst: CredentialCache.key(record.passwordHash) }
    cache.set(header, record.user.username, known, generation)
    return known
  }

  // A remembered credential past half its life is checked again beside the request that found it,
  // against its user's row as it is now: it stays (with the user's current roles and groups) while
  // the row holds the hash its password matched, which costs no password hash; a password set
  // again since is checked in full (through the line of checks, given up when it is full); a
  // deleted or disabled user's is dropped. A token is read again from the database. An outage
  // leaves the entry to expire as it would have.
  async function recheck (key: string, known: Known): Promise<void> {
    if (known.kind === 'token') {
      const started = epoch
      const record = await sessions.find(known.auth.tokenDigest ?? '')
      if (record === undefined) cache.drop(key)
      else if (started === epoch) rememberToken(key, known.auth, record)
      return
    }
    const generation = cache.generation(known.user.username)
    const record = await users.findForLogin(known.user.username)
    const verdict = recheckVerdict(known.checkedAgainst, record)
    const password = verdict === 'verify' ? parseBasicAuthorization(key)?.password : undefined
    const holds = verdict === 'keep' || (password !== undefined && record !== undefined &&
      await queue.run(async () => await verifyPassword(password, record.passwordHash)))
    if (holds && record !== undefined) remember(key, record, generation)
    else cache.drop(key)
  }
  function refresh (key: string, known: Known): void {
    recheck(key, known).catch((err: unknown) => {
      if (!(err instanceof QueueFull)) fastify.log.warn({ err }, 'could not re-verify cached credentials')
    })
  }

  function rememberToken (key: string, auth: RequestAuth, record: SessionRecord): Known {
    const known: Known = { kind: 'token', user: record.user, auth: record.clientId === null ? auth : { ...auth, clientId: record.clientId } }
    // Never past the token's own expiry; at most TOKEN_CACHE_TTL_MS, so a token revoked through
    // another instance stops working here within that time.
    cache.set(key, record.user.username, known, cache.generation(record.user.username), Math.min(tokenTtlMs, record.expiresAt - Date.now()))
    return known
  }

  // Requests carrying a credential that is being verified right now wait for that verification
  // instead of each paying for it (many arrive at once when a cache entry expires).
  const verifying = new Map<string, Promise<Known | undefined>>()
  async function once (key: string, verify: () => Promise<Known | undefined>): Promise<Known | undefined> {
    const inFlight = verifying.get(key)
    if (inFlight !== undefined) {
      const known = await inFlight.catch(() => undefined)
      if (known !== undefined) return known
    }
    const attempt = verify()
    if (!verifying.has(key)) {
      verifying.set(key, attempt)
      attempt.then(() => verifying.delete(key), () => verifying.delete(key))
    }
    return await attempt
  }

  // HTTP Basic is read by @fastify/basic-auth: it parses the header (RFC 7617: scheme, base64,
  // UTF-8, no control characters) and calls `validate` with the credentials. A header that is not
  // Basic credentials at all never reaches `validate`: the challenge, and nothing counted.
  // `validate` gives what it verified back through `verified`, keyed by the request it ran for.
  const verified = new WeakMap<FastifyRequest, Known>()
  async function validate (username: string, password: string, request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization ?? ''
    let record: LoginRecord | undefined
    // Read before the user's row: a change of the user while this check runs voids its result.
    const generation = cache.generation(username)
    try {
      record = await checkPassword(request.ip, username, password)
    } catch (err) {
      // The plugin makes any error without a status a 401 with the challenge: a refusal, an
      // outage or a bug each keep their own status instead (429 and 503 are HttpErrors already).
      if (err instanceof HttpError) throw err
      throw isDatabaseUnavailable(err) ? databaseUnavailable(err) : new HttpError(500, 'Could not check the credentials', { cause: err })
    }
    if (record === undefined) throw unauthorized()
    verified.set(request, remember(header, record, generation))
  }
  // No `authenticate` option: the plugin would answer `Basic realm="netauto", charset="UTF-8"`,
  // and drops the charset only when it also decodes credentials as ASCII, which would refuse
  // non-ASCII passwords. The challenge stays `Basic realm="netauto"`, written in one place
  // (`authenticate` below) for every kind of credential. Lax parsing: optional whitespace around
  // the scheme and credentials, as clients sent it before (RFC 7230 3.2.3 BWS).
  await fastify.register(basicAuth, { validate, strictCredentials: false })

  /** Verifies a Basic header the cache did not know through @fastify/basic-auth; undefined when refused. */
  async function basicLogin (request: FastifyRequest, reply: FastifyReply, header: string): Promise<Known | undefined> {
    return await once(header, async () => await new Promise<Known | undefined>((resolve, reject) => {
      fastify.basicAuth(request, reply, (err?: Error) => {
        if (err === undefined) resolve(verified.get(request))
        // Malformed, not Basic, or wrong credentials: refused; the caller sends the challenge.
        else if ((err as { statusCode?: unknown }).statusCode === 401) resolve(undefined)
        else reject(err)
      })
    }))
  }

  async function tokenLogin (method: AuthMethod, token: string, key: string): Promise<Known | undefined> {
    if (!isWellFormedToken(token)) return undefined
    return await once(key, async () => {
      const started = epoch
      const digest = tokenDigest(token)
      const record = await sessions.find(digest)
      if (record === undefined) return undefined
      const auth: RequestAuth = { method, tokenDigest: digest }
      if (started === epoch) return rememberToken(key, auth, record)
      return { kind: 'token', user: record.user, auth: record.clientId === null ? auth : { ...auth, clientId: record.clientId } }
    })
  }

  /** Authenticates a request the cache did not know; sets `request.user` or throws. */
  async function authenticate (request: FastifyRequest, reply: FastifyReply, header: string | undefined, queryToken: unknown): Promise<void> {
    let known: Known | undefined
    let challenge = BASIC_CHALLENGE
    try {
      if (header !== undefined) {
        const bearer = /^\s*bearer\s+(\S+)\s*$/i.exec(header)
        if (bearer !== null || /^\s*bearer\b/i.test(header)) {
          challenge = TOKEN_CHALLENGE
          known = await tokenLogin('bearer', bearer?.[1] ?? '', header)
        } else {
          known = await basicLogin(request, reply, header)
        }
      } else if (queryToken !== undefined) {
        challenge = TOKEN_CHALLENGE
        known = typeof queryToken === 'string' ? await tokenLogin('query', queryToken, `${QUERY_KEY}${queryToken}`) : undefined
      } else {
        const cookies = request.headers.cookie === undefined ? undefined : fastify.parseCookie(request.headers.cookie)
        const token = cookies?.[TOKEN_COOKIE]
        if (token !== undefined) {
          challenge = TOKEN_CHALLENGE
          const key = `${COOKIE_KEY}${token}`
          const cached = cache.lookup(key)
          if (cached?.refresh === true) refresh(key, cached.value)
          known = cached?.value ?? await tokenLogin('cookie', token, key)
        }
      }
    } catch (err) {
      if (err instanceof HttpError) {
        const retryAfter = err.details?.retryAfter
        if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter))
        throw err
      }
      throw isDatabaseUnavailable(err) ? databaseUnavailable(err) : err
    }
    if (known === undefined) {
      reply.header('www-authenticate', challenge)
      throw unauthorized()
    }
    request.user = known.user
    request.auth = known.auth
  }

  fastify.decorate('authorize', function (allowed?: readonly Role[]): onRequestHookHandler {
    // Bound once per route: nothing about the route is looked up per request.
    const refusal = allowed === undefined ? '' : `This operation needs one of the roles: ${allowed.join(', ')}`
    const verdict = (user: AuthUser): HttpError | undefined =>
      allowed === undefined || user.roles.some((r) => r === 'admin' || allowed.includes(r)) ? undefined : new HttpError(403, refusal)
    return function authorize (request, reply, done) {
      // `?token=` is a credential, not a parameter of the route: no route sees it.
      const query = request.query as Record<string, unknown> | undefined
      const queryToken = query?.token
      if (queryToken !== undefined) delete query?.token
      // A credential verified moments ago is answered without a promise or a microtask: this is
      // the path of nearly every request of a working client (Basic or Bearer alike).
      const header = request.headers.authorization
      const cached = header === undefined
        ? (typeof queryToken === 'string' ? cache.lookup(`${QUERY_KEY}${queryToken}`) : undefined)
        : cache.lookup(header, request.raw.socket)
      if (cached !== undefined) {
        const key = header ?? `${QUERY_KEY}${String(queryToken)}`
        if (cached.refresh) refresh(key, cached.value)
        request.user = cached.value.user
        request.auth = cached.value.auth
        done(verdict(cached.value.user))
        return
      }
      authenticate(request, reply, header, queryToken).then(() => { done(verdict(request.user)) }, done)
    }
  })

  await bootstrapAdmin(fastify)
}, { name: 'auth', dependencies: ['config', 'users-repository', 'sessions-repository'] })

function toAuthUser (user: User): AuthUser {
  const { username, roles, groups, email } = user
  return { username, roles, groups, email }
}

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
 * Makes every route registered in `scope` after this call require credentials (Basic, or a
 * token as Bearer, cookie or query parameter) and the roles in its `config.roles`, and says so in
 * the OpenAPI document.
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
    security: SECURITY,
    response: { ...errors, ...(schema.response as Record<number, unknown> | undefined) }
  }
}
