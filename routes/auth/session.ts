import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { TOKEN_COOKIE } from '../../lib/auth/schemes.js'
import { callable } from '../../lib/auth/platform-methods.js'
import { LogoutResult, WhoAmI, WhoAmIQuery } from '../../schemas/auth.js'
import { callerOf } from '../../lib/auth/roles.js'

/** The caller's own session: who it is, and logging out. Any authenticated user. */
const session: FastifyPluginAsyncTypebox = async (fastify) => {
  const tags = ['authentication']

  fastify.get('/whoami', {
    schema: {
      summary: 'The caller as the platform answers it: id, username, groups, roles, and what it may call (routes, methods)',
      description: 'A superset of the platform\'s answer: also `email`, `authenticatedBy` and, for a service account\'s token, `clientId`. ' +
        '`routes` and `methods` come from the same role requirements that authorise each request.',
      tags,
      querystring: WhoAmIQuery,
      response: { 200: WhoAmI }
    }
  }, async (request) => {
    const { user, auth } = callerOf(request)
    const { username, roles, groups, email } = user
    const { method, clientId } = auth
    const account = clientId === undefined ? undefined : await fastify.sessionsRepository.getServiceAccount(clientId)
    const provenance = clientId === undefined ? 'local' : 'oauth'
    return {
      id: clientId ?? username,
      provenance,
      username,
      firstname: account?.name ?? username,
      groups: groups.map((name) => ({ id: name, name, provenance })),
      roles,
      ...callable(user, fastify.guardedRoutes),
      email,
      authenticatedBy: method,
      ...(clientId === undefined ? {} : { clientId })
    }
  })

  const logout = {
    schema: {
      summary: 'Log out: ends the session whose token the request carries (every instance refuses it within TOKEN_CACHE_TTL_MS)',
      description: 'With Basic credentials there is no session to end: the answer says so (`loggedOut: false`).',
      tags,
      response: { 200: LogoutResult }
    }
  }
  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<{ loggedOut: boolean }> => {
    const { user, auth } = callerOf(request)
    const digest = auth.tokenDigest
    reply.clearCookie(TOKEN_COOKIE, { path: '/' })
    if (digest === undefined) return { loggedOut: false }
    // Ending a session is a write: the trail says whose token stopped working, and when.
    request.audit('logout', user.username)
    const ended = await fastify.sessionsRepository.end(digest)
    request.audit('logout', user.username, { ended })
    return { loggedOut: ended }
  }
  // Ending a session is a write: with the cookie, a GET from another origin (an image, a link) is
  // refused as a POST would be.
  fastify.get('/logout', { ...logout, config: { changesState: true } }, handler)
  fastify.post('/logout', logout, handler)
}

export default session
