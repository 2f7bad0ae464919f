import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ADMINS } from '../../plugins/auth.js'
import { HttpError } from '../../lib/http/errors.js'
import { checkActionParams, checkQueryParams } from '../../lib/orchestrator/relay-request.js'
import type { CheckResult } from '../../lib/http/check-result.js'
import { decodeUpstreamBody } from '../../lib/orchestrator/upstream.js'
import { errorResponses } from '../../schemas/common.js'
import {
  RelayParams, RestActionBody, RestActionResponse, RestQueryBody, RestQueryResponse, UpstreamErrorResponse
} from '../../schemas/orchestrator.js'

// Nothing goes upstream unless the parameters pass lib/orchestrator/relay-request.ts.
function checked<T> (result: CheckResult<T>): T {
  if (!result.ok) throw new HttpError(400, result.reason, { code: 'INVALID_RELAY_PARAMS' })
  return result.value
}

// These methods carry no body upstream: RESTCONF defines none for them, and a GET body has no
// meaning in HTTP (some servers refuse it). The `body` the caller must send is then ignored.
const BODYLESS = new Set(['GET', 'DELETE'])

const upstreamErrors = { 502: UpstreamErrorResponse, 504: UpstreamErrorResponse }

/** The REST relay to the orchestrator (spec 4.4, 4.5), through a registered adapter. Admin only. */
const relay: FastifyPluginAsyncTypebox = async (fastify) => {
  const orchestrator = fastify.orchestrator
  const config = { roles: ADMINS }
  const tags = ['orchestrator_manager']

  fastify.post('/restAction/:adapterId', {
    config,
    schema: {
      summary: 'Make a REST action on the orchestrator',
      description: 'Sends `body` as JSON with `params.method` (default POST) to `params.path` below the adapter\'s base URL, ' +
        'with `Accept: params.accept` and `Content-Type: params.contentType` (default: accept). GET and DELETE send no body. ' +
        'Answers `[{result: "<upstream status>", data?}]`; an upstream error status is a 502 carrying it.',
      tags,
      params: RelayParams,
      body: RestActionBody,
      response: { 200: RestActionResponse, ...errorResponses(400, 404, 500, 503), ...upstreamErrors }
    }
  }, async (request) => {
    const params = checked(checkActionParams(request.body.params))
    const hasBody = !BODYLESS.has(params.method)
    const answer = await orchestrator.send(request.params.adapterId, {
      method: params.method,
      path: params.path,
      accept: params.accept,
      ...(hasBody ? { body: { text: JSON.stringify(request.body.body), contentType: params.contentType } } : {})
    })
    const data = decodeUpstreamBody(answer.contentType, answer.body)
    return [data === undefined ? { result: String(answer.status) } : { result: String(answer.status), data }]
  })

  fastify.post('/restQuery/:adapterId', {
    config,
    schema: {
      summary: 'Make a REST query on the orchestrator',
      description: 'GETs `params.path` below the adapter\'s base URL with `Accept: params.accept` and answers the document ' +
        'as it came (same Content-Type and bytes); an upstream error status is a 502 carrying it.',
      tags,
      params: RelayParams,
      body: RestQueryBody,
      response: { 200: RestQueryResponse, ...errorResponses(400, 404, 500, 503), ...upstreamErrors }
    }
  }, async (request, reply) => {
    const params = checked(checkQueryParams(request.body.params))
    const answer = await orchestrator.send(request.params.adapterId, { method: 'GET', path: params.path, accept: params.accept })
    if (answer.contentType !== undefined) reply.header('content-type', answer.contentType)
    return await reply.code(200).send(answer.body)
  })
}

export default relay
