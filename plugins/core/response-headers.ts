import fp from 'fastify-plugin'

/**
 * Headers on every answer of the service. `X-Content-Type-Options: nosniff`: an answer relayed
 * with its upstream content type (text/html included) is never rendered as something else by a
 * browser. Set among the reply's headers, which every answer is written with (a stream, an error,
 * a 404): a header set on the raw response instead makes Node take its slower path for every
 * header of the answer.
 */
export const RESPONSE_HEADERS = { 'x-content-type-options': 'nosniff' } as const

export default fp(async (fastify) => {
  fastify.addHook('onRequest', (_request, reply, done) => {
    reply.headers(RESPONSE_HEADERS)
    done()
  })
}, { name: 'response-headers' })
