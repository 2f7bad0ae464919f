import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ADMINS } from '../../lib/auth/roles.js'
import { OAuthClientNotFound, UserNotFound } from '../../lib/auth/errors.js'
import { InvalidListParameter } from '../../lib/lists/errors.js'
import { pageEnvelope, parseListQuery, project } from '../../lib/lists/list-query.js'
import { Deleted, errorResponses } from '../../schemas/common.js'
import { OAUTH_CLIENT_LIST, OAuthClientCreate, OAuthClientCreated, OAuthClientList, OAuthClientListQuery, OAuthClientParams } from '../../schemas/auth.js'

/** OAuth 2.0 clients: service accounts that act as a user (its roles and groups). Admin only. */
const oauthClients: FastifyPluginAsyncTypebox = async (fastify) => {
  const repo = fastify.sessionsRepository
  const config = { roles: ADMINS }
  const tags = ['authentication']

  fastify.post('/', {
    config,
    schema: {
      summary: 'Create an OAuth client acting as a user; its secret is in this answer only',
      tags,
      body: OAuthClientCreate,
      response: { 200: OAuthClientCreated, ...errorResponses(400, 404) }
    }
  }, async (request) => {
    const { username, name } = request.body
    request.audit('serviceAccount.create', username)
    if (await fastify.usersRepository.get(username) === undefined) throw new UserNotFound(username)
    try {
      const { client, secret } = await repo.createClient(username, name ?? '', request.user.username)
      request.audit('serviceAccount.create', client.client_id, { user: username })
      return { ...client, client_secret: secret }
    } catch (err) {
      // The user was deleted meanwhile (foreign key violation).
      if ((err as { code?: unknown }).code === '23503') throw new UserNotFound(username)
      throw err
    }
  })

  fastify.get('/', {
    config,
    schema: {
      summary: 'List OAuth clients (never their secrets), a page at a time',
      description: 'The platform\'s list language: limit (default 25, at most 100), skip, sort (client_id), order (1 or -1), ' +
        'include / exclude, and equals, contains, starts-with on name (default), username or client_id.',
      tags,
      querystring: OAuthClientListQuery,
      response: { 200: OAuthClientList, ...errorResponses(400) }
    }
  }, async (request) => {
    const list = parseListQuery(OAUTH_CLIENT_LIST, request.query, fastify.config)
    if (!list.ok) throw new InvalidListParameter(list.reason)
    const { items, total } = await repo.listClients(list.value)
    return pageEnvelope(items.map((client) => project(client, list.value.projection)), list.value, total)
  })

  fastify.delete('/:clientId', {
    config,
    schema: {
      summary: 'Delete an OAuth client; its access tokens end with it',
      tags,
      params: OAuthClientParams,
      response: { 200: Deleted, ...errorResponses(400, 404) }
    }
  }, async (request) => {
    request.audit('serviceAccount.delete', request.params.clientId)
    const username = await repo.deleteClient(request.params.clientId)
    if (username === undefined) throw new OAuthClientNotFound(request.params.clientId)
    fastify.forgetCredentials(username)
    return { deleted: true }
  })
}

export default oauthClients
