import fp from 'fastify-plugin'
import { CallerGone, RouteNotFound, retryAfterOf, toErrorBody } from '../../lib/http/errors.js'
import { ErrorResponse } from '../../schemas/common.js'
import { pathOf } from '../../lib/http/public-url.js'
import { callerHungUp } from '../../lib/http/hang-up.js'

/** One error shape for every failure, unknown routes included; 5xx are logged, never echoed. */
export default fp(async (fastify) => {
  // The error body's schema, referenced by every route's error responses.
  fastify.addSchema(ErrorResponse)
  fastify.setErrorHandler(async (err, request, reply) => {
    const body = toErrorBody(err)
    // An error that says when to retry (a throttled login, a full queue, busy providers) says it
    // in the header too.
    const retryAfter = retryAfterOf(err)
    if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter))
    // A streamed answer cut short because its caller hung up is no failure of the service.
    if ((err as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE' && callerHungUp(request)) {
      const gone = new CallerGone()
      request.log.info({ statusCode: gone.statusCode, code: gone.code }, gone.message)
      return await reply.code(gone.statusCode).send(toErrorBody(gone))
    }
    if (body.statusCode >= 500) request.log.error({ err }, 'request failed')
    else request.log.info({ statusCode: body.statusCode, code: body.code, reason: body.message }, 'request refused')
    return await reply.code(body.statusCode).send(body)
  })

  fastify.setNotFoundHandler(async (request, reply) => {
    const body = toErrorBody(new RouteNotFound(request.method, pathOf(request.url)))
    return await reply.code(404).send(body)
  })
}, { name: 'error-handler' })
