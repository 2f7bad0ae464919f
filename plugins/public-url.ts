import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyRequest {
    /** The address clients use for `path` on this service: absolute under PUBLIC_URL, else relative. */
    publicUrl: (path: string) => string
  }
}

/** The one place that builds URLs pointing back at this service (edit links, OpenAPI server). */
export default fp(async (fastify) => {
  const base = fastify.config.PUBLIC_URL?.replace(/\/+$/, '')
  fastify.decorateRequest('publicUrl', function (path: string): string {
    return base === undefined ? path : `${base}${path}`
  })
}, { name: 'public-url', dependencies: ['config'] })
