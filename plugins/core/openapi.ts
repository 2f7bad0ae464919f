import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyRequest, FastifySchema, RouteOptions } from 'fastify'
import { OperationIds } from '../../lib/http/openapi-contract.js'
import packageJson from '../../package.json' with { type: 'json' }

/** A route's schema as the document reads it (the documentation fields Fastify's type leaves out). */
type DocumentedSchema = FastifySchema & { hide?: boolean, operationId?: string, security?: unknown[] }

/**
 * The OpenAPI 3 document at /openapi.json, built from the route schemas, and Swagger UI at /docs/.
 * What every route has in common is added here, from its configuration (docs/decisions.md,
 * "The OpenAPI document"): a route documents only what is its own.
 */
export default fp(async (fastify) => {
  const ids = new OperationIds()
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Network automation platform API',
        description: packageJson.description,
        version: packageJson.version
      },
      components: {
        securitySchemes: {
          basicAuth: { type: 'http', scheme: 'basic' },
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A session token (POST /login) or an OAuth access token (POST /oauth/token)' },
          cookieAuth: { type: 'apiKey', in: 'cookie', name: 'token', description: 'The session token set by POST /login' },
          queryToken: { type: 'apiKey', in: 'query', name: 'token', description: 'A session or access token as `?token=` (left out of logs)' }
        }
      }
    },
    transform: ({ schema, url, route }: { schema: FastifySchema, url: string, route: RouteOptions }) => {
      const documented = schema as DocumentedSchema | undefined
      if (documented === undefined || documented.hide === true) return { schema, url }
      const method = [route.method].flat()[0] ?? 'GET'
      return { schema: { ...documented, operationId: documented.operationId ?? ids.idFor(method, route.url) } as FastifySchema, url }
    },
    // Shared schemas keep their $id as their component name.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
    }
  })
  // The server URL depends on how the client reached us (PUBLIC_URL or a trusted proxy's headers).
  const forRequest = (request: FastifyRequest) => {
    const document = fastify.swagger()
    const base = request.publicUrl('')
    return base === '' ? document : { ...document, servers: [{ url: base }] }
  }
  await fastify.register(swaggerUi, {
    routePrefix: '/docs',
    transformSpecification: (_spec, request) => forRequest(request),
    transformSpecificationClone: false
  })
  fastify.get('/openapi.json', { schema: { hide: true } }, async (request) => forRequest(request))
}, { name: 'openapi', dependencies: ['config', 'public-url'] })
