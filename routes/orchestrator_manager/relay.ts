import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { ADMINS } from '../../lib/auth/roles.js'
import { relayedPath } from '../../lib/audit/events.js'
import { checkActionParams, checkQueryParams } from '../../lib/orchestrator/relay-request.js'
import type { CheckResult } from '../../lib/http/check-result.js'
import { emptyJsonType, isBodilessAnswer, upstreamInvalidJson, WHOLE_ANSWER_MAX_BYTES } from '../../lib/orchestrator/upstream.js'
import { InvalidRelayParams } from '../../lib/orchestrator/errors.js'
import { actionBody } from '../../lib/orchestrator/action-body.js'
import { pipeline } from 'node:stream'
import { errorResponses } from '../../schemas/common.js'
import {
  RelayParams, RestActionBody, RestActionResponse, RestQueryBody, RelayUpstreamErrorResponse, RestQueryEmptyResponse, RestQueryResponse
} from '../../schemas/orchestrator.js'

// Nothing goes upstream unless the parameters pass lib/orchestrator/relay-request.ts.
function checked<T> (result: CheckResult<T>): T {
  if (!result.ok) throw new InvalidRelayParams(result.reason)
  return result.value
}

const upstreamErrors = { 502: RelayUpstreamErrorResponse, 504: RelayUpstreamErrorResponse }

/**
 * What the orchestrator's answer says beyond its body, on the relay's reply: its status, its
 * Location verbatim under a name of its own (a Location on this reply would point into this
 * service), and NSO's trace id under NSO's own name.
 */
function relayHeaders (reply: FastifyReply, answer: { status: number, location?: string | undefined, traceId?: string | undefined }): void {
  reply.header('x-orchestrator-status', String(answer.status))
  if (answer.location !== undefined) reply.header('x-orchestrator-location', answer.location)
  if (answer.traceId !== undefined) reply.header('x-cisco-nso-trace-id', answer.traceId)
}

const HEADERS_NOTE = ' The reply carries `X-Orchestrator-Status` (the orchestrator\'s status) and, when the orchestrator sent them, ' +
  '`X-Orchestrator-Location` (its `Location`, verbatim) and `X-Cisco-NSO-Trace-ID`. A 2xx answer with a body of another media type ' +
  'than `accept` (an HTML page of a proxy) is a 502 `UPSTREAM_UNEXPECTED_MEDIA_TYPE`; a bodiless one (NSO labels its 201 and 204 `text/html`) is a success.'

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
        'with `Accept: params.accept` and `Content-Type: params.contentType` (default: accept), which must be a JSON media type. ' +
        'GET and DELETE send no body. ' +
        'Answers `[{result: "<upstream status>", data?}]`; an upstream error status is a 502 carrying it.' + HEADERS_NOTE,
      tags,
      params: RelayParams,
      body: RestActionBody,
      response: { 200: RestActionResponse, ...errorResponses(400, 404, 500, 503), ...upstreamErrors }
    }
  }, async (request, reply) => {
    request.audit('orchestrator.restAction', request.params.adapterId)
    const params = checked(checkActionParams(request.body.params))
    const adapterId = request.params.adapterId
    request.audit('orchestrator.restAction', adapterId, { method: params.method, ...relayedPath(params.path) })
    // Decoded from its Content-Encoding, if any: the JSON is checked on the orchestrator's text.
    const answer = await orchestrator.open(adapterId, {
      method: params.method,
      path: params.path,
      accept: params.accept,
      ...(params.contentType === undefined ? {} : { body: { text: JSON.stringify(request.body.body), contentType: params.contentType } })
    }, { decode: true, caller: reply.raw })
    request.audit('orchestrator.restAction', adapterId, { nsoStatus: answer.status })
    // Written as the answer arrives (lib/orchestrator/action-body.ts); a failure before the first
    // byte of the reply is a clean error status, after it the reply is cut short (docs/orchestrator.md).
    const reply$ = actionBody({
      status: answer.status,
      contentType: answer.contentType,
      invalidJson: (reason) => upstreamInvalidJson(adapterId, reason)
    })
    pipeline(answer.body, reply$, () => {})
    relayHeaders(reply, answer)
    return await reply.code(200).type('application/json; charset=utf-8').send(reply$)
  })

  fastify.post('/restQuery/:adapterId', {
    config,
    schema: {
      summary: 'Make a REST query on the orchestrator',
      description: 'GETs `params.path` below the adapter\'s base URL with `Accept: params.accept` and answers the document ' +
        'as it came (same Content-Type, Content-Encoding and bytes); an upstream error status is a 502 carrying it. ' +
        'A bodiless answer (NSO\'s 204 for an empty container) to a JSON query is `200` with `{}` and `X-Orchestrator-Empty: true`; ' +
        'to another one it is the orchestrator\'s 204, with the same header.' + HEADERS_NOTE,
      tags,
      params: RelayParams,
      body: RestQueryBody,
      response: { 200: RestQueryResponse, 204: RestQueryEmptyResponse, ...errorResponses(400, 404, 500, 503), ...upstreamErrors }
    }
  }, async (request, reply) => {
    request.audit('orchestrator.restQuery', request.params.adapterId)
    const params = checked(checkQueryParams(request.body.params))
    request.audit('orchestrator.restQuery', request.params.adapterId, { method: 'GET', ...relayedPath(params.path) })
    const answer = await orchestrator.open(request.params.adapterId, { method: 'GET', path: params.path, accept: params.accept }, { wholeBelow: WHOLE_ANSWER_MAX_BYTES, caller: reply.raw })
    request.audit('orchestrator.restQuery', request.params.adapterId, { nsoStatus: answer.status })
    relayHeaders(reply, answer)
    if (isBodilessAnswer(answer.status, answer.contentLength)) {
      // Nothing to read; draining it lets the socket go back to the pool.
      answer.body.resume()
      reply.header('x-orchestrator-empty', 'true')
      const type = emptyJsonType(params.accept, answer.contentType)
      if (type === undefined) return await reply.code(204).send(null)
      return await reply.code(200).type(type).send(Buffer.from('{}'))
    }
    if (answer.contentType !== undefined) reply.header('content-type', answer.contentType)
    // The bytes go as they came, so their coding goes with them (gzip stays gzip, labelled).
    if (answer.contentEncoding !== undefined) reply.header('content-encoding', answer.contentEncoding)
    // A small answer goes whole, with its length; a larger one streams, with the announced
    // length when there was one, which lets a client tell an answer cut short from a complete one.
    // (Without a Content-Type it streams: Fastify would label a whole one application/octet-stream.)
    if (answer.whole !== undefined && answer.contentType !== undefined) return await reply.code(200).send(answer.whole)
    if (answer.contentLength !== undefined) reply.header('content-length', answer.contentLength)
    return await reply.code(200).send(answer.body)
  })
}

export default relay
