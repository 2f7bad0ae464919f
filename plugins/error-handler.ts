import fp from 'fastify-plugin'
import { toErrorBody } from '../lib/errors.js'

/** One error shape for every failure, unknown routes included; 5xx are logged, never echoed. */
export default fp(async (fastify) => {
  fastify.setErrorHandler(async (err, request, reply) => {
    const body = toErrorBody(err)
    if (body.statusCode >= 500) request.log.error({ err }, 'request failed')
    else request.log.info({ statusCode: body.statusCode, code: body.code, reason: body.message }, 'request refused')
    return await reply.code(body.statusCode).send(body)
  })

  fastify.setNotFoundHandler(async (request, reply) => {
    return await reply.code(404).send({
      statusCode: 404,
      error: 'Not Found',
      message: `Route ${request.method}:${request.url.split('?')[0] ?? ''} not found`
    })
  })
}, { name: 'error-handler' })
