import Fastify, { type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler'
import { randomUUID } from 'node:crypto'
import configPlugin, { type Config } from './plugins/config.js'
import databasePlugin from './plugins/database.js'
import usersRepositoryPlugin from './plugins/users-repository.js'
import authPlugin, { requireAuthentication } from './plugins/auth.js'
import errorHandlerPlugin from './plugins/error-handler.js'
import openapiPlugin from './plugins/openapi.js'
import publicUrlPlugin from './plugins/public-url.js'
import { ErrorResponse } from './schemas/common.js'
import healthRoutes from './routes/health.js'
import usersRoutes from './routes/users/index.js'
import configurationManagerRoutes from './routes/configuration_manager/index.js'
import orchestratorAdaptersPlugin from './plugins/orchestrator-adapters.js'
import orchestratorPlugin from './plugins/orchestrator.js'
import orchestratorAdapterRoutes from './routes/orchestrator_manager/adapters.js'
import orchestratorRelayRoutes from './routes/orchestrator_manager/relay.js'

/** Log fields that may carry secrets; pino replaces them with "[Redacted]". */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'password', '*.password', '*.*.password', 'token', '*.token', '*.*.token'
]

/** TRUST_PROXY: "true"/"false", a hop count, or a comma-separated list of addresses/CIDRs. */
export function trustProxyOption (value: string | undefined): NonNullable<FastifyServerOptions['trustProxy']> {
  if (value === undefined || value === 'false') return false
  if (value === 'true') return true
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  return value
}

// Request bodies are validated as sent: no type coercion, unknown properties are an error.
// Query strings and path parameters arrive as text, so there numbers and booleans are coerced.
// (The compiler's published types describe an older call signature; Fastify passes the route.)
type RouteValidatorCompiler = (route: { schema: unknown, httpPart?: string }) => unknown
function validatorCompilers (): NonNullable<FastifyServerOptions['schemaController']> {
  const factory = AjvCompiler()
  const buildValidator: BuildCompilerFromPool = (externalSchemas) => {
    const strict = factory(externalSchemas, { customOptions: { coerceTypes: false, removeAdditional: false } }) as unknown as RouteValidatorCompiler
    const lenient = factory(externalSchemas, { customOptions: { coerceTypes: 'array', removeAdditional: false } }) as unknown as RouteValidatorCompiler
    const compile: RouteValidatorCompiler = (route) => route.httpPart === 'body' ? strict(route) : lenient(route)
    return compile as unknown as ReturnType<BuildCompilerFromPool>
  }
  return { compilersFactory: { buildValidator } }
}

/**
 * Builds the service: cross-cutting plugins first, then the open routes, then the guarded areas.
 * `logStream` replaces standard output as the log destination (tests read the log through it).
 */
export async function buildApp (config: Config, options: { logStream?: { write: (line: string) => void } } = {}) {
  const app = Fastify({
    logger: { level: config.LOG_LEVEL, redact: REDACTED_PATHS, stream: options.logStream },
    bodyLimit: config.BODY_LIMIT,
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    schemaController: validatorCompilers(),
    ajv: { customOptions: { allErrors: false } }
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.addSchema(ErrorResponse)
  await app.register(configPlugin, { config })
  await app.register(errorHandlerPlugin)
  await app.register(publicUrlPlugin)
  await app.register(openapiPlugin)
  await app.register(databasePlugin)
  await app.register(usersRepositoryPlugin)
  await app.register(authPlugin)
  await app.register(orchestratorAdaptersPlugin)
  await app.register(orchestratorPlugin)

  await app.register(healthRoutes)
  await app.register(async (api) => {
    requireAuthentication(api)
    await api.register(usersRoutes, { prefix: '/users' })
    await api.register(configurationManagerRoutes, { prefix: '/configuration_manager' })
    await api.register(orchestratorAdapterRoutes, { prefix: '/orchestrator_manager/adapters' })
    await api.register(orchestratorRelayRoutes, { prefix: '/orchestrator_manager' })
  })

  return app
}
