import basicAuth from '@fastify/basic-auth'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { isWellFormedToken, tokenDigest } from '../../lib/auth/tokens.js'
import type { AuthUser } from '../../lib/auth/roles.js'
import { BASIC_CHALLENGE, TOKEN_CHALLENGE, TOKEN_COOKIE } from '../../lib/auth/schemes.js'
import { CredentialCheckFailed, CrossOriginWriteRefused, InvalidCredentials } from '../../lib/auth/errors.js'
import { PAGE_REQUEST_HEADER, crossOriginRefusal, originOf } from '../../lib/auth/cross-origin.js'
import { HttpError, databaseUnavailable, isDatabaseUnavailable } from '../../lib/http/errors.js'
import type { AuthMethod } from '../../schemas/auth.js'
import type { SessionsRepository } from './sessions-repository.js'
import type { LoginThrottle } from './login-throttle.js'
import type { Known, RememberedCredentials } from './remembered-credentials.js'

/** HTTP Basic credentials as @fastify/basic-auth reads them from an Authorization header. */
export interface BasicCredentials { username: string, password: string }

/** Who sent a request, from its credential: Basic, or a token as Bearer, query parameter or cookie. */
export interface Credentials {
  /**
   * Sets `request.user` and `request.auth` from the request's credential, then calls `done` with
   * the user, or with the refusal (401 with its challenge, 403, 429, 503). At once when the
   * credential was verified moments ago: no promise, no microtask.
   */
  identify: (request: FastifyRequest, reply: FastifyReply, done: (err: Error | undefined, user?: AuthUser) => void) => void
  /**
   * The Basic credentials of the request's Authorization header, read by @fastify/basic-auth
   * (nothing is verified); undefined when there are none, or the header is not Basic credentials.
   */
  readBasic: (request: FastifyRequest, reply: FastifyReply) => BasicCredentials | undefined
}

// Cache keys of tokens that came as a query parameter or cookie: a NUL, which no header value
// holds, keeps them apart from Authorization header values (the keys of Basic and Bearer).
const QUERY_KEY = '\u0000query '
const COOKIE_KEY = '\u0000cookie '
const NO_PASSWORD = (): undefined => undefined

// HTTP Basic is read in one way, by @fastify/basic-auth (RFC 7617: the scheme, base64, UTF-8, no
// control characters; lax, as clients sent it before: optional blanks around the scheme and the
// credentials, RFC 7230 3.2.3 BWS). No `authenticate` option: the plugin would answer
// `Basic realm="netauto", charset="UTF-8"`, and drops the charset only when it also decodes
// credentials as ASCII, which would refuse non-ASCII passwords. The challenge stays
// `Basic realm="netauto"`, written in one place (`refusal` below) for every kind of credential.
const BASIC_OPTIONS = { strictCredentials: false } as const

export async function credentials (fastify: FastifyInstance, sessions: SessionsRepository, throttle: LoginThrottle, memory: RememberedCredentials): Promise<Credentials> {
  // The plugin exports no parser of its own. The places that read a header outside a request's
  // authentication (the re-check of a remembered credential, the audit actor, the token
  // endpoint) use a second registration of it, in a scope of its own, whose `validate` only hands
  // over what the plugin read, at once: one grammar, the plugin's, for every reading.
  let read: BasicCredentials | undefined
  let reader: onRequestHookHandler | undefined
  await fastify.register(async (scope) => {
    await scope.register(basicAuth, {
      ...BASIC_OPTIONS,
      validate (username, password, _request, _reply, done) {
        read = { username, password }
        done()
      }
    })
    reader = scope.basicAuth as onRequestHookHandler
  })
  function readBasic (request: FastifyRequest, reply: FastifyReply): BasicCredentials | undefined {
    read = undefined
    // A `validate` that calls `done` at once: the plugin reads the header before this returns.
    reader?.call(fastify, request, reply, () => {})
    const credentials = read
    read = undefined
    return credentials
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

  // Requests with Basic credentials the memory does not know are authenticated by the plugin, as
  // it is meant to be used: its `basicAuth` hook reads the header and calls `validate` with the
  // credentials, which verifies them and sets the request's caller. A header that is not Basic
  // credentials at all never reaches `validate`: the challenge, and nothing counted.
  async function validate (username: string, password: string, request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization ?? ''
    const known = await once(header, async () => {
      // Read before the user's row: a change of the user while this check runs voids its result.
      const started = memory.since(username)
      try {
        const record = await throttle.checkPassword(request.ip, username, password)
        return record === undefined ? undefined : memory.rememberBasic(header, record, started)
      } catch (err) {
        // The plugin makes any error without a status a 401 with the challenge: a refusal, an
        // outage or a bug each keep their own status instead (429 and 503 are HttpErrors already).
        if (err instanceof HttpError) throw err
        throw isDatabaseUnavailable(err) ? databaseUnavailable(err) : new CredentialCheckFailed({ cause: err })
      }
    })
    if (known === undefined) throw new InvalidCredentials()
    settle(request, known)
  }
  await fastify.register(basicAuth, { ...BASIC_OPTIONS, validate })

  function settle (request: FastifyRequest, known: Known): AuthUser {
    request.user = known.user
    request.auth = known.auth
    return known.user
  }

  /** The refusal of a request without a credential that holds: a 401, with `challenge` unless the studio page sent it. */
  function refusal (request: FastifyRequest, reply: FastifyReply, challenge: string): Error {
    // The studio page's own calls get no challenge: a browser would open its login dialog.
    if (request.headers[PAGE_REQUEST_HEADER] === undefined) reply.header('www-authenticate', challenge)
    return new InvalidCredentials()
  }

  async function tokenLogin (method: AuthMethod, token: string, key: string): Promise<Known | undefined> {
    if (!isWellFormedToken(token)) return undefined
    return await once(key, async () => {
      const started = memory.since()
      const digest = tokenDigest(token)
      const record = await sessions.find(digest)
      return record === undefined ? undefined : memory.rememberToken(key, { method, tokenDigest: digest }, record, started)
    })
  }

  /** The origins this service is reached at: as the request addressed it, and PUBLIC_URL's (or the proxy's) when absolute. */
  function ownOrigins (request: FastifyRequest): string[] {
    const own = [`${request.protocol}://${request.host}`.toLowerCase()]
    const announced = originOf(request.publicUrl('/'))
    if (announced !== undefined) own.push(announced)
    return own
  }

  /** Identifies a request the memory did not know by its token (Bearer, query parameter or cookie), or refuses it. */
  async function identifyByToken (request: FastifyRequest, reply: FastifyReply, header: string | undefined, queryToken: unknown): Promise<AuthUser> {
    let known: Known | undefined
    let challenge = TOKEN_CHALLENGE
    try {
      if (header !== undefined) {
        known = await tokenLogin('bearer', /^\s*bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? '', header)
      } else if (queryToken !== undefined) {
        known = typeof queryToken === 'string' ? await tokenLogin('query', queryToken, `${QUERY_KEY}${queryToken}`) : undefined
      } else {
        const cookies = request.headers.cookie === undefined ? undefined : fastify.parseCookie(request.headers.cookie)
        const token = cookies?.[TOKEN_COOKIE]
        if (token === undefined) {
          challenge = BASIC_CHALLENGE
        } else {
          // The browser sends the cookie whichever page asks: a write must come from our own origin.
          const refusal = crossOriginRefusal(request.method, request.headers, ownOrigins(request), request.routeOptions.config.changesState === true)
          if (refusal !== undefined) throw new CrossOriginWriteRefused(refusal)
          const key = `${COOKIE_KEY}${token}`
          known = memory.recall(key, NO_PASSWORD) ?? await tokenLogin('cookie', token, key)
        }
      }
    } catch (err) {
      if (err instanceof HttpError) throw err
      throw isDatabaseUnavailable(err) ? databaseUnavailable(err) : err
    }
    if (known === undefined) throw refusal(request, reply, challenge)
    return settle(request, known)
  }

  function identify (request: FastifyRequest, reply: FastifyReply, done: (err: Error | undefined, user?: AuthUser) => void): void {
    // `?token=` is a credential, not a parameter of the route: no route sees it.
    const query = request.query as Record<string, unknown> | undefined
    const queryToken = query?.token
    if (queryToken !== undefined) delete query?.token
    // A credential verified moments ago is answered without a promise or a microtask: this is
    // the path of nearly every request of a working client (Basic or Bearer alike).
    const header = request.headers.authorization
    const known = header === undefined
      ? (typeof queryToken === 'string' ? memory.recall(`${QUERY_KEY}${queryToken}`, NO_PASSWORD) : undefined)
      : memory.recall(header, () => readBasic(request, reply)?.password, request.raw.socket)
    if (known !== undefined) {
      done(undefined, settle(request, known))
    } else if (header !== undefined && !/^\s*bearer\b/i.test(header)) {
      // Basic credentials, or nothing this service reads: the plugin's to read and verify.
      const basic = fastify.basicAuth as onRequestHookHandler
      basic.call(fastify, request, reply, (err?: Error) => {
        if (err === undefined) done(undefined, request.user ?? undefined)
        // Malformed, not Basic, or wrong credentials: refused, with the challenge.
        else if ((err as { statusCode?: unknown }).statusCode === 401) done(refusal(request, reply, BASIC_CHALLENGE))
        else done(err)
      })
    } else {
      identifyByToken(request, reply, header, queryToken).then((user) => { done(undefined, user) }, (err: Error) => { done(err) })
    }
  }

  return { identify, readBasic }
}
