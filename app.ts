import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest, type FastifySchemaValidationError, type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler'
import type { DestinationStream } from 'pino'
import configPlugin, { type Config } from './plugins/core/config.js'
import databasePlugin from './plugins/database/index.js'
import dataDirPlugin from './plugins/core/data-dir.js'
import secretsPlugin from './plugins/core/secrets.js'
import componentGroupsRepositoryPlugin from './plugins/studio/index.js'
import authPlugin, { requireAuthentication } from './plugins/auth/index.js'
import errorHandlerPlugin from './plugins/core/error-handler.js'
import openapiPlugin from './plugins/core/openapi.js'
import metricsPlugin from './plugins/core/metrics.js'
import loadSheddingPlugin from './plugins/core/load-shedding.js'
import publicUrlPlugin from './plugins/core/public-url.js'
import requestInputPlugin from './plugins/core/request-input.js'
import responseHeadersPlugin, { RESPONSE_HEADERS } from './plugins/core/response-headers.js'
import { ErrorResponse } from './schemas/common.js'
import { trustProxy } from './lib/http/public-url.js'
import { MalformedRequest, MalformedUrl, PathParameterTooLong, toErrorBody, type CatalogErrorConstructor } from './lib/http/errors.js'
import { requestIdGenerator } from './lib/http/ids.js'
import { freeFormKeywords } from './lib/http/free-form.js'
import healthRoutes from './routes/health.js'
import loginRoutes from './routes/auth/login.js'
import sessionRoutes from './routes/auth/session.js'
import oauthClientRoutes from './routes/auth/oauth-clients.js'
import { withoutQueryToken } from './lib/auth/tokens.js'
import usersRoutes from './routes/users/index.js'
import configurationManagerRoutes from './routes/configuration_manager/index.js'
import studioRoutes from './routes/studio/component-groups.js'
import gitPlugin from './plugins/git/index.js'
import gitProjectsRoutes from './routes/git/projects.js'
import gitBranchesRoutes from './routes/git/branches.js'
import gitRepositoriesRoutes from './routes/git/repositories.js'
import gitCredentialsRoutes from './routes/git/credentials.js'
import orchestratorPlugin from './plugins/orchestrator/index.js'
import orchestratorAdapterRoutes from './routes/orchestrator_manager/adapters.js'
import orchestratorRelayRoutes from './routes/orchestrator_manager/relay.js'

/**
 * Log fields that may carry secrets; pino replaces them with "[Redacted]". The paths are
 * explicit: a wildcard as the first segment would make pino run redaction over every field of
 * every line, including the request id bound to each request's logger.
 */
const SECRET_FIELDS = ['password', 'token']
const OBJECTS_WITH_SECRETS = ['err', 'body', 'user', 'adapter', 'provider', 'credentials', 'config', 'params', 'input']
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'headers.authorization',
  ...SECRET_FIELDS,
  ...OBJECTS_WITH_SECRETS.flatMap((object) => SECRET_FIELDS.map((field) => `${object}.${field}`))
]

// Fastify's request fields in the log, with the URL's `?token=` (a credential) left out.
const logSerializers = {
  // Anything else logged under `req` (not a request) is left out rather than serialised whole.
  req: (req: FastifyRequest) => typeof req.url !== 'string'
    ? {}
    : ({
        method: req.method,
        url: withoutQueryToken(req.url),
        host: req.host,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort
      })
}

// Request bodies are validated as sent: no type coercion, unknown properties are an error.
// Query strings and path parameters arrive as text, so there numbers and booleans are coerced.
// (The compiler's published types describe an older call signature; Fastify passes the route.)
type RouteValidatorCompiler = (route: { schema: unknown, httpPart?: string }) => unknown
function schemaCompilers (): NonNullable<FastifyServerOptions['schemaController']> {
  const factory = AjvCompiler()
  const buildValidator: BuildCompilerFromPool = (externalSchemas) => {
    // Free-form fields carry their own depth and size limits (x-max-depth, x-max-bytes).
    const keywords = freeFormKeywords
    const strict = factory(externalSchemas, { customOptions: { coerceTypes: false, removeAdditional: false, keywords } }) as unknown as RouteValidatorCompiler
    const lenient = factory(externalSchemas, { customOptions: { coerceTypes: 'array', removeAdditional: false, keywords } }) as unknown as RouteValidatorCompiler
    const compile: RouteValidatorCompiler = (route) => route.httpPart === 'body' ? strict(route) : lenient(route)
    return compile as unknown as ReturnType<BuildCompilerFromPool>
  }
  // Responses are serialised by Fastify's own compiler (fast-json-stringify), from the schemas as written.
  return { compilersFactory: { buildValidator } }
}

/**
 * Fastify's validation message, plus the name of an unknown property: Ajv's own message
 * ("must NOT have additional properties") does not say which one it is.
 */
export function schemaErrorFormatter (errors: FastifySchemaValidationError[], dataVar: string): Error {
  return new Error(errors.map((e) => {
    const unknown = e.keyword === 'additionalProperties' ? ` ('${String(e.params.additionalProperty)}')` : ''
    return `${dataVar}${e.instancePath} ${e.message ?? 'is invalid'}${unknown}`
  }).join(', '))
}

// Fastify answers malformed and over-long URLs before routing, with a body of its own that echoes
// the URL back; these answers use the one error shape instead, and echo nothing.
const FRAMEWORK_ERRORS: Record<string, CatalogErrorConstructor<[]>> = {
  FST_ERR_BAD_URL: MalformedUrl,
  FST_ERR_MAX_PARAM_LENGTH: PathParameterTooLong
}
function frameworkErrors (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const answer = new (FRAMEWORK_ERRORS[error.code] ?? MalformedRequest)()
  void reply.code(answer.statusCode).headers(RESPONSE_HEADERS).send(toErrorBody(answer))
}

/** Builds the service: cross-cutting plugins first, then the open routes, then the guarded areas. */
export async function buildApp (config: Config, options: { logStream?: DestinationStream } = {}) {
  const app = Fastify({
    logger: { level: config.LOG_LEVEL, redact: REDACTED_PATHS, serializers: logSerializers, stream: options.logStream },
    bodyLimit: config.BODY_LIMIT,
    // The first start of the embedded database runs initdb, which takes many seconds on a busy
    // machine: Fastify's default 10 s plugin timeout would make that first start fail.
    pluginTimeout: 120_000,
    trustProxy: trustProxy(config.TRUST_PROXY),
    // `/users` and `/users/` are one resource; scripts write either. Path parameters may be long
    // once decoded (a Git project path may take 1,024 bytes): the routes check their own limits
    // and say which one a value broke.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    // The generator reads X-Request-Id itself and keeps it only when short and safe; otherwise a
    // per-process random part and a counter (lib/http/ids.ts).
    requestIdHeader: false,
    genReqId: requestIdGenerator(),
    schemaController: schemaCompilers(),
    schemaErrorFormatter,
    frameworkErrors,
    ajv: { customOptions: { allErrors: false } }
  }).withTypeProvider<TypeBoxTypeProvider>()

  // The API speaks JSON only: any other body type is a 415, not a string handed to validation.
  app.removeContentTypeParser('text/plain')
  app.addSchema(ErrorResponse)
  await app.register(configPlugin, { config })
  await app.register(errorHandlerPlugin)
  await app.register(responseHeadersPlugin)
  // JSON bodies, path and query parameters of every route: see plugins/core/request-input.ts.
  await app.register(requestInputPlugin)
  // Before any route is added, so that every route but liveness is shed under overload.
  await app.register(loadSheddingPlugin)
  await app.register(publicUrlPlugin)
  await app.register(openapiPlugin)
  await app.register(dataDirPlugin)
  await app.register(secretsPlugin)
  await app.register(databasePlugin)
  await app.register(componentGroupsRepositoryPlugin)
  await app.register(authPlugin)
  await app.register(metricsPlugin)
  await app.register(gitPlugin)
  await app.register(orchestratorPlugin)

  await app.register(healthRoutes)
  await app.register(loginRoutes)
  await app.register(async (api) => {
    requireAuthentication(api)
    await api.register(usersRoutes, { prefix: '/users' })
    await api.register(sessionRoutes)
    await api.register(oauthClientRoutes, { prefix: '/oauth/clients' })
    await api.register(configurationManagerRoutes, { prefix: '/configuration_manager' })
    await api.register(studioRoutes, { prefix: '/studio/component-groups' })
    await api.register(gitProjectsRoutes, { prefix: '/git' })
    await api.register(gitBranchesRoutes, { prefix: '/git' })
    await api.register(gitRepositoriesRoutes, { prefix: '/git' })
    await api.register(gitCredentialsRoutes, { prefix: '/users' })
    await api.register(orchestratorAdapterRoutes, { prefix: '/orchestrator_manager/adapters' })
    await api.register(orchestratorRelayRoutes, { prefix: '/orchestrator_manager' })
  })

  return app
}
