// The options Fastify takes when the instance is made (they cannot come from a plugin): logging
// with secrets redacted, schema compilers, validation messages, framework errors, router limits.
import type { Server } from 'node:http'
import type { FastifyError, FastifyHttpOptions, FastifyReply, FastifyRequest, FastifySchemaValidationError, FastifyServerOptions } from 'fastify'
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler'
import { SerializerSelector, type SerializerFactory, type Serializer } from '@fastify/fast-json-stringify-compiler'
import type { DestinationStream } from 'pino'
import type { Config } from './config.js'
import { RESPONSE_HEADERS } from './response-headers.js'
import { trustProxy } from '../../lib/http/public-url.js'
import { MalformedRequest, MalformedUrl, PathParameterTooLong, toErrorBody, type CatalogErrorConstructor } from '../../lib/http/errors.js'
import { requestIdGenerator } from '../../lib/http/ids.js'
import { freeFormKeywords } from '../../lib/http/free-form.js'
import { guardNumbers, type Validator } from '../../lib/http/finite-numbers.js'
import { unicodePatternKeyword } from '../../lib/http/unicode-pattern.js'
import { referencedSchemas } from '../../lib/http/schema-refs.js'
import { withoutQueryToken } from '../../lib/auth/tokens.js'

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

/** The longest URL (and Host) a log line carries: a client without credentials chooses them, at every request. */
export const LOG_URL_MAX = 512
const cut = (text: string): string => text.length > LOG_URL_MAX ? `${text.slice(0, LOG_URL_MAX)}…` : text

// Fastify's request fields in the log, with the URL's `?token=` (a credential) left out and the
// URL cut at LOG_URL_MAX characters.
const logSerializers = {
  // Anything else logged under `req` (not a request) is left out rather than serialised whole.
  req: (req: FastifyRequest) => typeof req.url !== 'string'
    ? {}
    : ({
        method: req.method,
        url: cut(withoutQueryToken(req.url)),
        host: typeof req.host === 'string' ? cut(req.host) : req.host,
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
    // Names with Unicode classes are checked by x-unicode-pattern (lib/http/unicode-pattern.ts).
    const keywords = [...freeFormKeywords, unicodePatternKeyword]
    const strict = factory(externalSchemas, { customOptions: { coerceTypes: false, removeAdditional: false, keywords } }) as unknown as RouteValidatorCompiler
    const lenient = factory(externalSchemas, { customOptions: { coerceTypes: 'array', removeAdditional: false, keywords } }) as unknown as RouteValidatorCompiler
    // There, too, a number must be finite and an integer safe (lib/http/finite-numbers.ts).
    const compile: RouteValidatorCompiler = (route) => route.httpPart === 'body' ? strict(route) : guardNumbers(route.schema, lenient(route) as Validator)
    return compile as unknown as ReturnType<BuildCompilerFromPool>
  }
  // Responses are serialised by Fastify's own compiler (fast-json-stringify), from the schemas as
  // written, each given only the shared schemas it refers to (lib/http/schema-refs.ts), and built
  // once for all the routes and statuses that answer the same schema (most error answers).
  const selectSerializer = SerializerSelector()
  const buildSerializer: SerializerFactory = (externalSchemas, serializerOptions) => {
    const shared = (externalSchemas ?? {}) as Record<string, unknown>
    const built = new Map<string, Serializer>()
    return (route) => {
      const key = JSON.stringify(route.schema)
      let serializer = built.get(key)
      if (serializer === undefined) {
        serializer = selectSerializer(referencedSchemas(route.schema, shared), serializerOptions)(route)
        built.set(key, serializer)
      }
      return serializer
    }
  }
  return { compilersFactory: { buildValidator, buildSerializer } }
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

/** Fastify's options for the service. */
export function serverOptions (config: Config, logStream?: DestinationStream): FastifyHttpOptions<Server> {
  return {
    logger: { level: config.LOG_LEVEL, redact: REDACTED_PATHS, serializers: logSerializers, stream: logStream },
    bodyLimit: config.BODY_LIMIT,
    // A request's headers, and the whole request, arrive within their deadlines (else 408 and the
    // connection closes; a connection that sends nothing is closed at the headers' deadline); an
    // idle keep-alive connection closes after its own. Node checks the first two on a timer, run
    // often enough for the shortest deadline. Answers: plugins/core/connections.ts.
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    // (Node checks headersTimeout against requestTimeout when the server is made: both given.)
    http: {
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.HTTP_HEADERS_TIMEOUT_MS / 4)))
    },
    // The first start of the embedded database runs initdb, which takes many seconds on a busy
    // machine: Fastify's default 10 s plugin timeout would make that first start fail.
    pluginTimeout: 120_000,
    trustProxy: trustProxy(config.TRUST_PROXY),
    // `/users` and `/users/` are one resource; scripts write either. Path parameters may be long
    // once decoded (a Git project path may take 1,024 bytes): the routes check their own limits
    // and say which one a value broke.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    // The generator reads X-Request-Id itself and keeps it only from a trusted proxy and when short
    // and safe; otherwise a per-process random part and a counter (lib/http/ids.ts).
    requestIdHeader: false,
    genReqId: requestIdGenerator(trustProxy(config.TRUST_PROXY)),
    schemaController: schemaCompilers(),
    schemaErrorFormatter,
    frameworkErrors,
    ajv: { customOptions: { allErrors: false } }
  }
}
