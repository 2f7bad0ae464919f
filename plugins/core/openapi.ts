import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyRequest, FastifySchema, RouteOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import {
  derivedStatuses, finishOperations, OperationIds, routeFacts, withoutServiceKeywords, type OpenApiDocument, type OperationFacts
} from '../../lib/http/openapi-contract.js'
import { LIST_MAX_SET_VALUES } from '../../lib/lists/grammar.js'
import { BRACKET_FILTERS, listSpecOf } from '../../schemas/lists.js'
import { components, ErrorResponse } from '../../schemas/common.js'
import packageJson from '../../package.json' with { type: 'json' }

/** A route's schema as the document reads it (the documentation fields Fastify's type leaves out). */
type DocumentedSchema = FastifySchema & { hide?: boolean, operationId?: string, security?: unknown[], response?: Record<string, unknown> }

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers errors of its own shape for every status it declares (the OAuth token endpoint). */
    ownErrors?: boolean
  }
}

/** Whether a body schema has a required field (then a request without a body is refused). */
function requiresBody (body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return true
  const { type, required } = body as { type?: unknown, required?: unknown }
  return type !== 'object' || (Array.isArray(required) && required.length > 0)
}

/**
 * The OpenAPI 3 document at /openapi.json, built from the route schemas, and Swagger UI at /docs/.
 * What every route has in common is added here, from its configuration (docs/decisions.md,
 * "The OpenAPI document"): a route documents only what is its own.
 */
export default fp(async (fastify) => {
  // The named schemas (ComponentGroup, User, the list pages...): shared, so that validation,
  // serialisation and the document read the one schema, referenced by its $id.
  for (const schema of components()) fastify.addSchema(schema)
  const ids = new OperationIds()
  const facts = new Map<string, OperationFacts>()
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Network automation platform API',
        description: packageJson.description,
        version: packageJson.version,
        license: { name: 'Proprietary: all rights reserved' }
      },
      // Relative: the document's own origin. PUBLIC_URL (or a trusted proxy) gives the full URL per request.
      servers: [{ url: '/', description: 'This service, where the document was read' }],
      tags: [
        { name: 'health', description: 'Liveness and readiness, for probes: no credentials.' },
        { name: 'authentication', description: 'Logging in and out (sessions, OAuth 2.0 client credentials), who you are, service accounts.' },
        { name: 'users', description: 'Local users and their roles (admins), and each user\'s Git credentials.' },
        { name: 'configuration_manager', description: 'The platform\'s configuration manager calls the platform\'s clients make.' },
        { name: 'git', description: 'Projects kept as JSON files in the repositories of Git providers: branches, read, initialize, update.' },
        { name: 'studio', description: 'Studio component groups: the list language, If-Match versions, history and restore.' },
        { name: 'orchestrator_manager', description: 'Orchestrator (NSO) adapters and the RESTCONF relay through them.' },
        { name: 'platform paths', description: 'The same operations under the platform\'s own paths (/automation-studio, /nso_manager), for its clients.' },
        { name: 'audit', description: 'The audit trail of requests (admins).' }
      ],
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
      const operationId = documented.operationId ?? ids.idFor(method, route.url)
      const spec = listSpecOf(documented.querystring)
      const known: OperationFacts = {
        ...routeFacts({ method, url: route.url, secured: documented.security !== undefined, neverShed: route.config?.neverShed, ownErrors: route.config?.ownErrors, changesState: route.config?.changesState }),
        ...(documented.body === undefined ? {} : { bodyRequired: requiresBody(documented.body) }),
        ...(spec === undefined
          ? {}
          : { brackets: { fields: [...spec.filterable], maxValueLength: spec.maxValueLength, ops: BRACKET_FILTERS, maxValues: LIST_MAX_SET_VALUES } })
      }
      facts.set(operationId, known)
      const derived = Object.fromEntries(derivedStatuses(known).map((status) => [status, Type.Ref(ErrorResponse)]))
      return {
        schema: {
          ...documented,
          operationId,
          // An open route says so: no credentials needed.
          security: documented.security ?? [],
          response: { ...derived, ...documented.response }
        } as FastifySchema,
        url
      }
    },
    transformObject: (documentObject) => {
      if ('openapiObject' in documentObject) {
        finishOperations(documentObject.openapiObject as OpenApiDocument, facts)
        withoutServiceKeywords(documentObject.openapiObject)
      }
      return 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject
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
