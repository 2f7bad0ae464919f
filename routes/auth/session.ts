import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { TOKEN_COOKIE } from '../../lib/auth/schemes.js'
import { LogoutResult, WhoAmI } from '../../schemas/auth.js'

/** The caller's own session: who it is, and logging out. Any authenticated user. */
const session: FastifyPluginAsyncTypebox = async (fastify) => {
  const tags = ['authentication']

  fastify.get('/whoami', {
    schema: { summary: 'The caller: username, roles, groups, email, and how it authenticated', tags, response: { 200: WhoAmI } }
  }, async (request) => {
    const { username, roles, groups, email } = request.user
    const { method, clientId } = request.auth
    return { username, roles, groups, email, authenticatedBy: method, ...(clientId === undefined ? {} : { clientId }) }
  })

  const logout = {
    schema: {
      summary: 'Log out: ends the session whose token the request carries (every instance refuses it within TOKEN_CACHE_TTL_MS)',
      description: 'With Basic credentials there is no session to end: the answer says so (`loggedOut: false`).',
      tags,
      response: { 200: LogoutResult }
    }
  }
  const handler = async (request: { auth: { tokenDigest?: string }, user: { username: string } }, reply: { clearCookie: (name: string, options: { path: string }) => unknown }): Promise<{ loggedOut: boolean }> => {
    const digest = request.auth.tokenDigest
    reply.clearCookie(TOKEN_COOKIE, { path: '/' })
    if (digest === undefined) return { loggedOut: false }
    const ended = await fastify.sessionsRepository.end(digest)
    fastify.forgetCredentials(request.user.username)
    return { loggedOut: ended }
  }
  fastify.get('/logout', logout, handler)
  fastify.post('/logout', logout, handler)
}

export default session
