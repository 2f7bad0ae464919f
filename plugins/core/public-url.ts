import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { publicBase, trustProxy } from '../../lib/http/public-url.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The address clients use for `path` on this service: under PUBLIC_URL, else under the
     * address a trusted proxy forwarded, else relative.
     */
    publicUrl: (path: string) => string
  }
}

/** The one place that builds URLs pointing back at this service (edit links, OpenAPI server). */
export default fp(async (fastify) => {
  const { PUBLIC_URL, TRUST_PROXY } = fastify.config
  const trusted = trustProxy(TRUST_PROXY)
  fastify.decorateRequest('publicUrl', function (this: FastifyRequest, path: string): string {
    const base = publicBase({
      publicUrl: PUBLIC_URL,
      trusted: trusted(this.socket.remoteAddress ?? '', 0),
      protocol: this.protocol,
      host: this.host,
      forwardedPrefix: this.headers['x-forwarded-prefix']
    })
    return `${base}${path}`
  })
}, { name: 'public-url', dependencies: ['config'] })
