import basicAuth from '@fastify/basic-auth'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { parseBasicAuthorization } from '../../lib/auth/basic-auth-header.js'
import { CredentialCache, recheckVerdict } from '../../lib/auth/credential-cache.js'
import { QueueFull } from '../../lib/auth/check-queue.js'
import { isWellFormedToken, tokenDigest } from '../../lib/auth/tokens.js'
import { toAuthUser, type AuthUser, type RequestAuth } from '../../lib/auth/roles.js'
import { BASIC_CHALLENGE, TOKEN_CHALLENGE, TOKEN_COOKIE } from '../../lib/auth/schemes.js'
import { CredentialCheckFailed, CrossOriginWriteRefused, InvalidCredentials } from '../../lib/auth/errors.js'
import { PAGE_REQUEST_HEADER, crossOriginRefusal, originOf } from '../../lib/auth/cross-origin.js'
import { HttpError, databaseUnavailable, isDatabaseUnavailable } from '../../lib/http/errors.js'
import type { AuthMethod } from '../../schemas/auth.js'
import type { LoginRecord, UsersRepository } from './users-repository.js'
import type { SessionRecord, SessionsRepository } from './sessions-repository.js'
import type { LoginThrottle } from './login-throttle.js'

/** Who sent a request, from its credential: Basic, or a token as Bearer, query parameter or cookie. */
export interface Credentials {
  /**
   * Sets `request.user` and `request.auth` from the request's credential and gives the user: at
   * once when the credential was verified moments ago, otherwise as a promise that rejects with
   * the refusal (401 with its challenge, 429, 503).
   */
  identify: (request: FastifyRequest, reply: FastifyReply) => AuthUser | Promise<AuthUser>
  /** Drops what is remembered of `username`'s credentials and tokens. */
  forget: (username: string) => void
}

type Known =
  | { kind: 'basic', user: AuthUser, auth: RequestAuth, checkedAgainst: string }
  | { kind: 'token', user: AuthUser, auth: RequestAuth }

// Cache keys of tokens that came as a query parameter or cookie: a NUL, which no header value
// holds, keeps them apart from Authorization header values (the keys of Basic and Bearer).
const QUERY_KEY = '\u0000query '
const COOKIE_KEY = '\u0000cookie '

export async function credentials (fastify: FastifyInstance, users: UsersRepository, sessions: SessionsRepository, throttle: LoginThrottle): Promise<Credentials> {
  const config = fastify.config
  // Basic credentials (keyed by the Authorization header) and tokens (keyed by how they came) alike.
  const cache = new CredentialCache<Known>({ ttlMs: config.AUTH_CACHE_TTL_MS })
  const tokenTtlMs = config.TOKEN_CACHE_TTL_MS
  // Grows on every forget: a token read from the database before a change of its user is not kept.
  let epoch = 0

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
      await throttle.recheckPassword(password, record.passwordHash))
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
      record = await throttle.checkPassword(request.ip, username, password)
    } catch (err) {
      // The plugin makes any error without a status a 401 with the challenge: a refusal, an
      // outage or a bug each keep their own status instead (429 and 503 are HttpErrors already).
      if (err instanceof HttpError) throw err
      throw isDatabaseUnavailable(err) ? databaseUnavailable(err) : new CredentialCheckFailed({ cause: err })
    }
    if (record === undefined) throw new InvalidCredentials()
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

  /** The origins this service is reached at: as the request addressed it, and PUBLIC_URL's (or the proxy's) when absolute. */
  function ownOrigins (request: FastifyRequest): string[] {
    const own = [`${request.protocol}://${request.host}`.toLowerCase()]
    const announced = originOf(request.publicUrl('/'))
    if (announced !== undefined) own.push(announced)
    return own
  }

  /** Authenticates a request the cache did not know; sets `request.user` or throws. */
  async function authenticate (request: FastifyRequest, reply: FastifyReply, header: string | undefined, queryToken: unknown): Promise<AuthUser> {
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
          // The browser sends the cookie whichever page asks: a write must come from our own origin.
          const refusal = crossOriginRefusal(request.method, request.headers, ownOrigins(request), request.routeOptions.config.changesState === true)
          if (refusal !== undefined) throw new CrossOriginWriteRefused(refusal)
          const key = `${COOKIE_KEY}${token}`
          const cached = cache.lookup(key)
          if (cached?.refresh === true) refresh(key, cached.value)
          known = cached?.value ?? await tokenLogin('cookie', token, key)
        }
      }
    } catch (err) {
      if (err instanceof HttpError) throw err
      throw isDatabaseUnavailable(err) ? databaseUnavailable(err) : err
    }
    if (known === undefined) {
      // The studio page's own calls get no challenge: a browser would open its login dialog.
      if (request.headers[PAGE_REQUEST_HEADER] === undefined) reply.header('www-authenticate', challenge)
      throw new InvalidCredentials()
    }
    request.user = known.user
    request.auth = known.auth
    return known.user
  }

  function identify (request: FastifyRequest, reply: FastifyReply): AuthUser | Promise<AuthUser> {
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
    if (cached === undefined) return authenticate(request, reply, header, queryToken)
    const key = header ?? `${QUERY_KEY}${String(queryToken)}`
    if (cached.refresh) refresh(key, cached.value)
    request.user = cached.value.user
    request.auth = cached.value.auth
    return cached.value.user
  }

  return {
    identify,
    forget (username) {
      epoch++
      cache.forget(username)
    }
  }
}
