import fp from 'fastify-plugin'

/**
 * Headers on every answer of the service. `X-Content-Type-Options: nosniff`: an answer relayed
 * with its upstream content type (text/html included) is never rendered as something else by a
 * browser. Set on the raw response so that it is sent however the answer is written.
 */
export const RESPONSE_HEADERS = { 'x-content-type-options': 'nosniff' } as const

export default fp(async (fastify) => {
  fastify.addHook('onRequest', (_request, reply, done) => {
    for (const [name, value] of Object.entries(RESPONSE_HEADERS)) reply.raw.setHeader(name, value)
    done()
  })
}, { name: 'response-headers' })
