import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ADMINS, callerOf } from '../../lib/auth/roles.js'
import { ServiceAccountNotFound } from '../../lib/auth/errors.js'
import { listPage } from '../../lib/lists/page.js'
import { errorResponses } from '../../schemas/common.js'
import {
  SERVICE_ACCOUNT_LIST, ServiceAccountCreate, ServiceAccountCredentials, ServiceAccountList, ServiceAccountListQuery,
  ServiceAccountParams, ServiceAccountStatus, ServiceAccountUpdate
} from '../../schemas/auth.js'

/**
 * Service accounts as the platform manages them (its OAuth reference): principals of their own,
 * with roles and groups set by admins, that get access tokens from POST /oauth/token. Admin only.
 */
const serviceAccounts: FastifyPluginAsyncTypebox = async (fastify) => {
  const repo = fastify.sessionsRepository
  const config = { roles: ADMINS }
  const tags = ['authentication']

  fastify.post('/', {
    config,
    schema: {
      summary: 'Create a service account; its secret is in this answer only',
      description: 'The platform\'s body, `{accountData: {name, description}}`, with the account\'s `roles` and `groups` beside them (default none).',
      tags,
      body: ServiceAccountCreate,
      response: { 200: ServiceAccountCredentials, ...errorResponses(400) }
    }
  }, async (request) => {
    const { name, description = '', roles = [], groups = [] } = request.body.accountData
    request.audit('serviceAccount.create', name, { name, roles: roles.join(','), groups: groups.join(',') })
    const { account, secret } = await repo.createServiceAccount({ name, description, roles, groups }, callerOf(request).user.username)
    request.audit('serviceAccount.create', account.client_id)
    return { client_id: account.client_id, client_secret: secret }
  })

  fastify.get('/', {
    config,
    schema: {
      summary: 'List service accounts (never their secrets), a page at a time',
      description: 'The platform\'s list language: limit (default 25, at most 100), skip, sort (client_id), order (1 or -1), ' +
        'include / exclude, and equals, contains, starts-with on name (default), description or client_id. ' +
        'The items come as `items` and, as the platform names them, `results`.',
      tags,
      querystring: ServiceAccountListQuery,
      response: { 200: ServiceAccountList, ...errorResponses(400) }
    }
  }, async (request) => {
    const page = await listPage(SERVICE_ACCOUNT_LIST, request.query, fastify.config, async (list) => await repo.listServiceAccounts(list))
    return { ...page, results: page.items }
  })

  fastify.patch('/:client_id', {
    config,
    schema: {
      summary: 'Change a service account (name, description, roles, groups); absent fields stay as they are',
      description: 'The platform\'s body, `{updates: {...}}`. New roles and groups hold for its tokens within TOKEN_CACHE_TTL_MS on every instance.',
      tags,
      params: ServiceAccountParams,
      body: ServiceAccountUpdate,
      response: { 200: ServiceAccountStatus, ...errorResponses(400, 404) }
    }
  }, async (request) => {
    const clientId = request.params.client_id
    request.audit('serviceAccount.update', clientId, { fields: Object.keys(request.body.updates).join(',') })
    const account = await repo.updateServiceAccount(clientId, request.body.updates, callerOf(request).user.username)
    if (account === undefined) throw new ServiceAccountNotFound(clientId)
    return { status: 'OK' as const, message: `Service account "${clientId}" updated`, data: account }
  })

  fastify.patch('/:client_id/regenerate', {
    config,
    schema: {
      summary: 'Regenerate a service account\'s secret: the new one is in this answer only; the old one and its tokens stop working',
      tags,
      params: ServiceAccountParams,
      response: { 200: ServiceAccountCredentials, ...errorResponses(400, 404) }
    }
  }, async (request) => {
    const clientId = request.params.client_id
    request.audit('serviceAccount.regenerateSecret', clientId)
    const secret = await repo.regenerateSecret(clientId, callerOf(request).user.username)
    if (secret === undefined) throw new ServiceAccountNotFound(clientId)
    return { client_id: clientId, client_secret: secret }
  })

  fastify.delete('/:client_id', {
    config,
    schema: {
      summary: 'Delete a service account; its access tokens end with it',
      tags,
      params: ServiceAccountParams,
      response: { 200: ServiceAccountStatus, ...errorResponses(400, 404) }
    }
  }, async (request) => {
    const clientId = request.params.client_id
    request.audit('serviceAccount.delete', clientId)
    if (!await repo.deleteServiceAccount(clientId)) throw new ServiceAccountNotFound(clientId)
    return { status: 'OK' as const, message: `Service account "${clientId}" deleted` }
  })
}

export default serviceAccounts
