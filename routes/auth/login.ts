import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import formbody from '@fastify/formbody'
import { CLIENT_ID_PATTERN, sameDigest, tokenDigest } from '../../lib/auth/tokens.js'
import { BASIC_CHALLENGE, TOKEN_COOKIE } from '../../lib/auth/schemes.js'
import { retryAfterOf } from '../../lib/http/errors.js'
import {
  LoginFailed, OAuthClientAuthenticatedTwice, OAuthClientAuthMissing, OAuthClientAuthNotBasic, OAuthClientIdMismatch,
  OAuthGrantTypeMissing, OAuthInvalidClient, OAuthInvalidScope, OAuthUnsupportedGrantType, oauthErrorName
} from '../../lib/auth/errors.js'
import { errorResponses } from '../../schemas/common.js'
import { LoginBody, OAuthError, SessionToken, TokenRequest, TokenResponse } from '../../schemas/auth.js'

const CLIENT_ID = new RegExp(CLIENT_ID_PATTERN)

/** Decodes a client id or secret sent as HTTP Basic (RFC 6749 2.3.1: form-urlencoded first). */
function formDecoded (value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '))
  } catch {
    return undefined
  }
}

/** Logging in: sessions for the platform's clients, OAuth 2.0 access tokens for service accounts. Open routes. */
const login: FastifyPluginAsyncTypebox = async (fastify) => {
  const { SESSION_TTL_S, OAUTH_TOKEN_TTL_S } = fastify.config
  const sessions = fastify.sessionsRepository

  fastify.post('/login', {
    schema: {
      summary: 'Log in: a session token, also set as the HttpOnly `token` cookie',
      description: 'Send the token back as `Authorization: Bearer <token>`, the `token` cookie or `?token=<token>`. ' +
        `It lives ${SESSION_TTL_S} s from login (SESSION_TTL_S; use does not extend it). Failed logins are throttled as failed Basic logins are.`,
      tags: ['authentication'],
      body: LoginBody,
      response: { 200: SessionToken, ...errorResponses(400, 401, 429, 503) }
    }
  }, async (request, reply) => {
    const { username, password } = request.body.user
    request.audit('login', username, { method: 'session' }, { user: username })
    const user = await fastify.checkPassword(request.ip, username, password)
    if (user === undefined) throw new LoginFailed()
    const { token } = await sessions.create(user.username, SESSION_TTL_S)
    void reply.setCookie(TOKEN_COOKIE, token, {
      httpOnly: true,
      sameSite: 'strict',
      secure: request.protocol === 'https',
      path: '/',
      maxAge: SESSION_TTL_S
    })
    // A bare JSON string, as the platform answers (a string reply would otherwise go as text).
    return await reply.type('application/json; charset=utf-8').send(JSON.stringify(token))
  })

  // The token endpoint speaks RFC 6749 (form bodies, its own error objects) rather than the one error shape.
  await fastify.register(async (scope) => {
    const oauth = scope.withTypeProvider<TypeBoxTypeProvider>()
    await oauth.register(formbody, { bodyLimit: 4096 })
    oauth.addHook('onSend', async (_request, reply) => {
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    })
    oauth.setErrorHandler(async (err, request, reply) => {
      // Its own error handler: the one that sets Retry-After for every other route does not run here.
      const retryAfter = retryAfterOf(err)
      if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter))
      const { statusCode, message } = err as { statusCode?: unknown, message?: unknown }
      const error = oauthErrorName(err)
      if (error !== undefined && typeof statusCode === 'number') {
        if (statusCode === 401) void reply.header('www-authenticate', BASIC_CHALLENGE)
        return await reply.code(statusCode).send({ error, error_description: message })
      }
      const status = typeof statusCode === 'number' ? statusCode : 500
      const description = typeof message === 'string' ? message : 'The request is malformed'
      if (status === 429) return await reply.code(429).send({ error: 'temporarily_unavailable', error_description: description })
      if (status >= 400 && status < 500) return await reply.code(400).send({ error: 'invalid_request', error_description: description })
      request.log.error({ err }, 'token request failed')
      return await reply.code(503).send({ error: 'temporarily_unavailable', error_description: 'The service cannot issue tokens right now; retry shortly' })
    })

    oauth.post('/oauth/token', {
      config: { ownErrors: true },
      schema: {
        summary: 'OAuth 2.0 client credentials grant (RFC 6749 4.4): an access token for a client',
        description: 'Form-encoded `grant_type=client_credentials` with `client_id` and `client_secret` in the body, or the client ' +
          'id and secret as HTTP Basic credentials (client_secret_basic). Errors are RFC 6749 5.2 objects. ' +
          `The token lives ${OAUTH_TOKEN_TTL_S} s (OAUTH_TOKEN_TTL_S); send it as \`Authorization: Bearer <token>\`.`,
        tags: ['authentication'],
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenRequest,
        response: { 200: TokenResponse, 400: OAuthError, 401: OAuthError, 429: OAuthError, 503: OAuthError }
      }
    }, async (request, reply) => {
      const header = request.headers.authorization
      const basic = header === undefined ? undefined : fastify.readBasicCredentials(request, reply)
      if (header !== undefined && basic === undefined) throw new OAuthClientAuthNotBasic()
      const form: Static<typeof TokenRequest> = request.body ?? {}
      if (form.grant_type === undefined) throw new OAuthGrantTypeMissing()
      if (form.grant_type !== 'client_credentials') throw new OAuthUnsupportedGrantType()
      if (basic !== undefined && (form.client_secret !== undefined)) {
        throw new OAuthClientAuthenticatedTwice()
      }
      const clientId = basic === undefined ? form.client_id : formDecoded(basic.username)
      const secret = basic === undefined ? form.client_secret : formDecoded(basic.password)
      if (basic !== undefined && form.client_id !== undefined && form.client_id !== clientId) {
        throw new OAuthClientIdMismatch()
      }
      if (clientId === undefined || clientId === '' || secret === undefined || secret === '') {
        throw new OAuthClientAuthMissing()
      }
      if (form.scope !== undefined && form.scope.trim() !== '') throw new OAuthInvalidScope()
      request.audit('oauth.token', clientId, undefined, { serviceAccount: clientId })
      // An id of another form belongs to no client: refused before anything is looked up or counted.
      if (!CLIENT_ID.test(clientId)) throw new OAuthInvalidClient()
      const client = await sessions.findClient(clientId)
      const subject = `c:${clientId}`
      const stored = client?.secretDigest ?? ''
      const holds = await fastify.guardedCheck(request.ip, subject, fastify.loginGuard.fingerprint(subject, secret), stored,
        () => client !== undefined && sameDigest(tokenDigest(secret), client.secretDigest))
      if (!holds || client === undefined) throw new OAuthInvalidClient()
      const { token } = await sessions.create(null, OAUTH_TOKEN_TTL_S, clientId)
      return { access_token: token, token_type: 'Bearer' as const, expires_in: OAUTH_TOKEN_TTL_S }
    })
  })
}

export default login
