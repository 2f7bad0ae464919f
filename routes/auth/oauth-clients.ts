import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ADMINS } from '../../plugins/auth.js'
import { HttpError } from '../../lib/http/errors.js'
import { Deleted, errorResponses } from '../../schemas/common.js'
import { OAuthClientCreate, OAuthClientCreated, OAuthClientList, OAuthClientParams } from '../../schemas/auth.js'

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
    const missing = (): HttpError => new HttpError(404, `User "${username}" not found`)
    if (await fastify.usersRepository.get(username) === undefined) throw missing()
    try {
      const { client, secret } = await repo.createClient(username, name ?? '', request.user.username)
      return { ...client, client_secret: secret }
    } catch (err) {
      // The user was deleted meanwhile (foreign key violation).
      if ((err as { code?: unknown }).code === '23503') throw missing()
      throw err
    }
  })

  fastify.get('/', {
    config,
    schema: { summary: 'List OAuth clients (never their secrets)', tags, response: { 200: OAuthClientList } }
  }, async () => {
    const results = await repo.listClients()
    return { results, total: results.length }
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
    const username = await repo.deleteClient(request.params.clientId)
    if (username === undefined) throw new HttpError(404, `OAuth client "${request.params.clientId}" not found`)
    fastify.forgetCredentials(username)
    return { deleted: true }
  })
}

export default oauthClients
