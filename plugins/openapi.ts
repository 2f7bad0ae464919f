import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import packageJson from '../package.json' with { type: 'json' }

/** The OpenAPI 3 document at /openapi.json, built from the route schemas, and Swagger UI at /docs/. */
export default fp(async (fastify) => {
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Network automation platform API',
        description: packageJson.description,
        version: packageJson.version
      },
      servers: fastify.config.PUBLIC_URL === undefined ? [] : [{ url: fastify.config.PUBLIC_URL }],
      components: {
        securitySchemes: { basicAuth: { type: 'http', scheme: 'basic' } }
      }
    },
    // Shared schemas keep their $id as their component name.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
    }
  })
  await fastify.register(swaggerUi, { routePrefix: '/docs' })
  fastify.get('/openapi.json', { schema: { hide: true } }, async () => fastify.swagger())
}, { name: 'openapi', dependencies: ['config'] })
