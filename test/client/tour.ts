// A program written against a client generated from the service's OpenAPI document
// (openapi-typescript + openapi-fetch), as a user of the API writes one: every call, parameter
// and answer typed by the document, no cast. test/openapi/generated-client.test.ts generates
// `./api.d.ts` beside a copy of this file, type-checks both and runs it against the service.
import createClient from 'openapi-fetch'
import type { components, paths } from './api.js'

type ComponentGroup = components['schemas']['ComponentGroup']

export interface TourInput {
  baseUrl: string
  username: string
  password: string
  /** An orchestrator to register as an adapter and relay to. */
  orchestrator: { id: string, baseUrl: string, username: string, password: string }
}

function fail (what: string, error: unknown, response: Response): never {
  throw new Error(`${what}: ${response.status} ${JSON.stringify(error)}`)
}

export async function tour (input: TourInput) {
  // Log in: a session token.
  const anonymous = createClient<paths>({ baseUrl: input.baseUrl })
  const login = await anonymous.POST('/login', { body: { user: { username: input.username, password: input.password } } })
  if (login.data === undefined) fail('login', login.error, login.response)
  const token: string = login.data
  const api = createClient<paths>({ baseUrl: input.baseUrl, headers: { authorization: `Bearer ${token}` } })

  // Create a component group; its version comes back as the ETag.
  const created = await api.POST('/studio/component-groups', {
    body: { componentGroup: { name: 'tour', members: [{ path: ['site-a'] }], gbacRead: [] } }
  })
  if (created.data === undefined) fail('create', created.error, created.response)
  const group: ComponentGroup = created.data.created
  const etag = created.response.headers.get('etag') ?? undefined

  // List with a bracket filter (limit, skip, sort and order left to their defaults).
  const listed = await api.GET('/studio/component-groups', { params: { query: { 'equals[name]': 'tour' } } })
  if (listed.data === undefined) fail('list', listed.error, listed.response)
  const names = listed.data.items.map((item) => item.name)

  // Replace it, on condition that it is still the version created.
  const replaced = await api.PUT('/studio/component-groups/{id}', {
    params: { path: { id: group._id }, header: { 'if-match': etag } },
    body: { update: { name: 'tour', description: 'replaced through a generated client', members: [], gbacRead: [] } }
  })
  if (replaced.data === undefined) fail('replace', replaced.error, replaced.response)
  const stale = await api.PUT('/studio/component-groups/{id}', {
    params: { path: { id: group._id }, header: { 'if-match': etag } },
    body: { update: { name: 'tour', members: [], gbacRead: [] } }
  })

  // Its history, newest first.
  const history = await api.GET('/studio/component-groups/{id}/versions', { params: { path: { id: group._id } } })
  if (history.data === undefined) fail('history', history.error, history.response)
  const actions = history.data.items.map((entry) => entry.action)

  // An orchestrator adapter, and a RESTCONF GET relayed through it.
  const adapter = await api.POST('/orchestrator_manager/adapters', { body: input.orchestrator })
  if (adapter.data === undefined) fail('adapter', adapter.error, adapter.response)
  const relayed = await api.POST('/orchestrator_manager/restAction/{adapterId}', {
    params: { path: { adapterId: adapter.data.id } },
    body: { params: { path: '/restconf/data/tailf-ncs:devices/device=ce0', method: 'GET', accept: 'application/yang-data+json' }, body: {} }
  })
  if (relayed.data === undefined) fail('relay', relayed.error, relayed.response)

  return {
    version: replaced.data.updated.version,
    names,
    staleStatus: stale.response.status,
    staleMessage: stale.error?.message,
    actions,
    relayResults: relayed.data.map((result) => result.result)
  }
}
