import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ADMINS } from '../../lib/auth/roles.js'
import { listPage } from '../../lib/lists/page.js'
import { checkBaseUrl, checkCaBundle } from '../../lib/orchestrator/adapter.js'
import { AdapterExists, AdapterNameTaken, AdapterNotFound, InvalidAdapter } from '../../lib/orchestrator/errors.js'
import { withDetails } from '../../lib/http/errors.js'
import { Deleted, errorResponses } from '../../schemas/common.js'
import { adapterChanges } from '../../lib/audit/changes.js'
import { Adapter, ADAPTER_LIST, AdapterCreate, AdapterList, AdapterListQuery, AdapterParams, AdapterUpdate } from '../../schemas/orchestrator.js'

// What the schema cannot say about baseUrl and ca; a 400 that names the field, before any write.
function checkSettings<T extends { baseUrl?: string, ca?: string | null }> (input: T): T {
  const checked = { ...input }
  if (input.baseUrl !== undefined) {
    const baseUrl = checkBaseUrl(input.baseUrl, 'body/baseUrl')
    if (!baseUrl.ok) throw new InvalidAdapter(baseUrl.reason)
    checked.baseUrl = baseUrl.value
  }
  if (typeof input.ca === 'string') {
    const ca = checkCaBundle(input.ca, 'body/ca')
    if (!ca.ok) throw new InvalidAdapter(ca.reason)
  }
  return checked
}

/** The orchestrator adapter registry (admin only). Passwords are write-only. */
const adapters: FastifyPluginAsyncTypebox = async (fastify) => {
  const repo = fastify.adaptersRepository
  const config = { roles: ADMINS }
  const tags = ['orchestrator_manager']

  fastify.get('/', {
    config,
    schema: {
      summary: 'List orchestrator adapters, a page at a time',
      description: 'The platform\'s list language: limit (default 25, at most 100), skip, sort (id), order (1 or -1), ' +
        'include / exclude (exclude=ca leaves the CA bundles out), and equals, contains, starts-with on id or baseUrl, also as equals[id], in[baseUrl], ... (the platform\'s bracket forms).',
      tags,
      querystring: AdapterListQuery,
      response: { 200: AdapterList, ...errorResponses(400) }
    }
  }, async (request) => {
    return await listPage(ADAPTER_LIST, request.query, fastify.config, async (list) => await repo.list(list))
  })

  fastify.post('/', {
    config,
    schema: { summary: 'Create an orchestrator adapter', tags, body: AdapterCreate, response: { 200: Adapter, ...errorResponses(400, 409) } }
  }, async (request) => {
    const { id } = request.body
    request.audit('adapter.create', id, { baseUrl: request.body.baseUrl })
    const { created, taken } = await repo.create(checkSettings(request.body))
    if (taken === id) throw new AdapterExists(id)
    if (taken !== undefined) throw withDetails(new AdapterNameTaken(id, taken), { existingId: taken })
    return created
  })

  fastify.get('/:id', {
    config,
    schema: { summary: 'Get an orchestrator adapter', tags, params: AdapterParams, response: { 200: Adapter, ...errorResponses(400, 404) } }
  }, async (request) => {
    const adapter = await repo.get(request.params.id)
    if (adapter === undefined) throw new AdapterNotFound(request.params.id)
    return adapter
  })

  fastify.put('/:id', {
    config,
    schema: {
      summary: 'Change an orchestrator adapter; absent fields stay as they are, `ca: null` removes the CA',
      tags,
      params: AdapterParams,
      body: AdapterUpdate,
      response: { 200: Adapter, ...errorResponses(400, 404) }
    }
  }, async (request) => {
    request.audit('adapter.update', request.params.id, adapterChanges(request.body))
    const adapter = await repo.update(request.params.id, checkSettings(request.body))
    if (adapter === undefined) throw new AdapterNotFound(request.params.id)
    return adapter
  })

  fastify.delete('/:id', {
    config,
    schema: {
      summary: 'Delete an orchestrator adapter (its connections close once their calls are done)',
      tags,
      params: AdapterParams,
      response: { 200: Deleted, ...errorResponses(400, 404) }
    }
  }, async (request) => {
    request.audit('adapter.delete', request.params.id)
    const deleted = await repo.remove(request.params.id)
    if (!deleted) throw new AdapterNotFound(request.params.id)
    return { deleted }
  })
}

export default adapters
