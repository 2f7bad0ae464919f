// Checks what the service answers against its own OpenAPI document: every status a route sends
// must be listed for its operation, every body must be of a content type listed for that status
// and a JSON one must match the listed schema (Ajv over the document's schemas), the headers clients
// rely on must be declared where they are sent; and a request the service accepted (2xx) must be
// one the document describes: its path, query and header parameters and its body.
// `watchExchanges` checks every exchange of a service built for a test (test/helper.ts).
import { Ajv, type ValidateFunction } from 'ajv'
import { appendFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preValidationHookHandler, RouteOptions } from 'fastify'
import { hookList } from '../../lib/http/hook-list.js'
import type { TestApp } from '../helper.js'

interface Parameter { name: string, in: string, required?: boolean, schema?: unknown }
interface Operation {
  parameters?: Parameter[]
  requestBody?: { required?: boolean, content?: Record<string, { schema?: unknown }> }
  responses: Record<string, { content?: Record<string, { schema?: unknown }>, headers?: Record<string, unknown> }>
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown> }
  [key: string]: unknown
}

/** The document as a client reads it. */
export async function documentOf (app: TestApp): Promise<OpenApiDocument> {
  const response = await app.inject({ url: '/openapi.json' })
  if (response.statusCode !== 200) throw new Error(`GET /openapi.json: ${response.statusCode}`)
  return response.json()
}

/** Headers a client acts on: sent only where the document declares them. */
const CHECKED_HEADERS = [
  'etag', 'x-git-commit', 'retry-after', 'www-authenticate', 'location',
  'x-orchestrator-status', 'x-orchestrator-location', 'x-orchestrator-empty', 'x-cisco-nso-trace-id'
]

export interface Exchange {
  method: string
  url: string
  statusCode: number
  headers: Record<string, unknown>
  body: string | Buffer
  /** The operation's path as the document writes it (`/users/{username}`); found from `url` when absent. */
  template?: string
}

/** What a request carried, as the service received it. */
export interface RequestExchange {
  method: string
  url: string
  template?: string
  params: Record<string, unknown>
  headers: Record<string, unknown>
  /** The parsed body before validation; undefined when none was sent. */
  body: unknown
}

const mediaType = (value: unknown): string => String(value ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
const isJson = (type: string): boolean => type === 'application/json' || type.endsWith('+json')

/** A Fastify route URL as the document writes it: `/users/:username` -> `/users/{username}`. */
export const documentPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

/** The checks of exchanges against `document`: each a list of problems, empty when the exchange is documented. */
export function documentChecks (document: OpenApiDocument): { response: (exchange: Exchange) => string[], request: (request: RequestExchange) => string[] } {
  // The document's references point into itself: give its schemas a root Ajv can resolve them from.
  const text = JSON.stringify(document).replaceAll('"#/components/schemas/', '"openapi#/components/schemas/')
  const doc = JSON.parse(text) as OpenApiDocument
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false })
  ajv.addSchema({ $id: 'openapi', components: doc.components })
  // Parameters come as text: coerced as a server reading them does.
  const coercing = new Ajv({ strict: false, allErrors: true, validateFormats: false, coerceTypes: 'array' })
  coercing.addSchema({ $id: 'openapi', components: doc.components })
  const compiled = new Map<unknown, ValidateFunction>()
  const validator = (schema: unknown, coerce = false): ValidateFunction => {
    const key = coerce ? { coerce: schema } : schema
    let validate = compiled.get(coerce ? JSON.stringify(key) : schema)
    if (validate === undefined) {
      validate = (coerce ? coercing : ajv).compile(schema as object)
      compiled.set(coerce ? JSON.stringify(key) : schema, validate)
    }
    return validate
  }
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    params: (template.match(/\{/g) ?? []).length,
    regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+')}/?$`)
  })).sort((a, b) => a.params - b.params)

  const operationOf = (exchange: { method: string, url: string, template?: string }): { template: string, operation: Operation } | string => {
    const path = exchange.url.split('?')[0] ?? ''
    // HEAD is answered by the GET route, as the document's GET says.
    const method = exchange.method.toLowerCase() === 'head' ? 'get' : exchange.method.toLowerCase()
    const given = exchange.template === undefined ? undefined : [exchange.template, exchange.template.replace(/\/$/, '')].find((t) => doc.paths[t]?.[method] !== undefined)
    const template = given ?? templates.find((t) => t.regex.test(path) && doc.paths[t.template]?.[method] !== undefined)?.template
    if (template === undefined) return `${exchange.method} ${path}: no operation in the document`
    return { template, operation: doc.paths[template]?.[method] as Operation }
  }

  const response = (exchange: Exchange): string[] => {
    const found = operationOf(exchange)
    if (typeof found === 'string') return [found]
    const where = `${exchange.method} ${found.template} ${exchange.statusCode}`
    const declared = found.operation.responses[String(exchange.statusCode)]
    if (declared === undefined) return [`${where}: status not in the document`]
    const problems: string[] = []
    for (const name of CHECKED_HEADERS) {
      if (exchange.headers[name] === undefined) continue
      if (!Object.keys(declared.headers ?? {}).some((h) => h.toLowerCase() === name)) problems.push(`${where}: header ${name} sent, not declared`)
    }
    // No body leaves with a 204 or 304, nor with an answer to HEAD, whatever was handed to send().
    if (exchange.body.length === 0 || exchange.method.toUpperCase() === 'HEAD' || exchange.statusCode === 204 || exchange.statusCode === 304) return problems
    const type = mediaType(exchange.headers['content-type'])
    const content = Object.entries(declared.content ?? {}).find(([media]) => media.toLowerCase() === type || media === '*/*')?.[1]
    if (content === undefined) {
      problems.push(`${where}: a body of type ${type === '' ? '(none)' : type}, the document lists ${Object.keys(declared.content ?? {}).join(', ') || 'no body'}`)
    } else if (isJson(type) && content.schema !== undefined) {
      const validate = validator(content.schema)
      let body: unknown
      try {
        body = JSON.parse(exchange.body.toString())
      } catch {
        return [...problems, `${where}: a ${type} body that is not JSON`]
      }
      if (!validate(body)) problems.push(`${where}: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`)
    }
    return problems
  }

  const request = (exchange: RequestExchange): string[] => {
    const found = operationOf(exchange)
    if (typeof found === 'string') return [found]
    const where = `${exchange.method} ${found.template} request`
    const problems: string[] = []
    const parameters = found.operation.parameters ?? []
    const query = new Map<string, string[]>()
    for (const [name, value] of new URLSearchParams(exchange.url.split('?').slice(1).join('?'))) query.set(name, [...(query.get(name) ?? []), value])
    for (const name of query.keys()) {
      // `?token=` is a security scheme (queryToken), not a parameter.
      if (name !== 'token' && !parameters.some((p) => p.in === 'query' && p.name === name)) problems.push(`${where}: query parameter ${name} sent, not declared`)
    }
    for (const parameter of parameters) {
      const raw = parameter.in === 'path'
        ? exchange.params[parameter.name]
        : parameter.in === 'query'
          ? query.get(parameter.name)
          : parameter.in === 'header' ? exchange.headers[parameter.name.toLowerCase()] : undefined
      if (raw === undefined) {
        if (parameter.required === true && parameter.in !== 'cookie') problems.push(`${where}: ${parameter.in} parameter ${parameter.name} required, not sent`)
        continue
      }
      if (parameter.schema === undefined) continue
      const schema = parameter.schema as { type?: string }
      // One query value for a parameter that is not an array.
      const value = structuredClone(Array.isArray(raw) && schema.type !== 'array' && raw.length === 1 ? raw[0] : raw)
      const holder = { value }
      const validate = validator({ type: 'object', properties: { value: parameter.schema } }, true)
      if (!validate(holder)) problems.push(`${where}: ${coercing.errorsText(validate.errors, { dataVar: '' }).replaceAll('/value', `${parameter.in} parameter ${parameter.name}`)}`)
    }
    const body = found.operation.requestBody
    if (exchange.body === undefined) {
      if (body?.required === true) problems.push(`${where}: no body, the document requires one`)
      return problems
    }
    const type = mediaType(exchange.headers['content-type'])
    const content = Object.entries(body?.content ?? {}).find(([media]) => media.toLowerCase() === type || media === '*/*')?.[1]
    if (content === undefined) {
      problems.push(`${where}: a body of type ${type}, the document lists ${Object.keys(body?.content ?? {}).join(', ') || 'no body'}`)
    } else if (content.schema !== undefined && (isJson(type) || type === 'application/x-www-form-urlencoded')) {
      const validate = validator(content.schema, type !== 'application/json')
      if (!validate(structuredClone(exchange.body))) problems.push(`${where}: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`)
    }
    return problems
  }

  return { response, request }
}

/** A checker of answers against `document`: a list of problems, empty when the exchange is documented. */
export function exchangeChecker (document: OpenApiDocument): (exchange: Exchange) => string[] {
  return documentChecks(document).response
}

/** Exchanges checked so far in this process, for the figures. */
export const exchangeCounts = { responses: 0, requests: 0, ms: 0 }

// The figures, for whoever runs the tests: appended to the file OPENAPI_EXCHANGES_LOG names.
const countsLog = process.env.OPENAPI_EXCHANGES_LOG
if (countsLog !== undefined && countsLog !== '') {
  process.once('exit', () => {
    appendFileSync(countsLog, `${JSON.stringify({ file: process.argv[1], ...exchangeCounts })}\n`)
  })
}

// Built once per set of routes in a process: the services the tests build share one document.
const checksByRoutes = new Map<string, ReturnType<typeof documentChecks>>()

const SENT_BODY = Symbol('body as sent')
type Watched = FastifyRequest & { [SENT_BODY]?: unknown }

/**
 * Checks every exchange of `fastify` (to be called as it is created, before its routes are added)
 * against the document it serves: each answer of a documented route, and its request when the
 * service accepted it (`requests: false` leaves requests out, for tests that send garbage on
 * purpose; `unlistedStatuses`: statuses the test provokes on purpose that no client is meant to
 * see, such as the 500 of a row no version of the service could have stored). Each problem goes to
 * `report`, naming method, path, status and what differs.
 */
export function watchExchanges (fastify: FastifyInstance, report: (problem: string) => void, options: { requests?: boolean, unlistedStatuses?: readonly number[] } = {}): void {
  const routes: string[] = []
  let checks: ReturnType<typeof documentChecks> | undefined
  const checksOf = (): ReturnType<typeof documentChecks> => {
    if (checks !== undefined) return checks
    const key = routes.sort().join('\n')
    checks = checksByRoutes.get(key)
    if (checks === undefined) {
      checks = documentChecks(JSON.parse(JSON.stringify(fastify.swagger())) as OpenApiDocument)
      checksByRoutes.set(key, checks)
    }
    return checks
  }
  const keepBody: preValidationHookHandler = function (request, _reply, done) {
    // A request without a body may be given `{}` by the service before this hook: what was sent counts.
    const { 'content-type': type, 'content-length': length, 'transfer-encoding': chunked } = request.headers
    const sent = type !== undefined || (length !== undefined && length !== '0') || chunked !== undefined
    if (sent && request.body !== undefined) (request as Watched)[SENT_BODY] = structuredClone(request.body)
    done()
  }
  const check = (request: FastifyRequest, reply: FastifyReply, payload: unknown, template: string): void => {
    const body = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : undefined
    if (body === undefined && payload !== null && payload !== undefined) return // a stream: its bytes are not at hand
    // The caller left (499, client closed request, is what the log records): no answer reaches anyone.
    if (reply.statusCode === 499 || request.raw.destroyed) return
    if (options.unlistedStatuses?.includes(reply.statusCode) === true) return
    const started = performance.now()
    const { response, request: requestCheck } = checksOf()
    exchangeCounts.responses++
    const headers = reply.getHeaders()
    const problems = response({ method: request.method, url: request.url, template, statusCode: reply.statusCode, headers, body: body ?? '' })
    if (options.requests !== false && reply.statusCode >= 200 && reply.statusCode < 300) {
      exchangeCounts.requests++
      problems.push(...requestCheck({
        method: request.method,
        url: request.url,
        template,
        params: Object.fromEntries(Object.entries(request.params as Record<string, unknown>).map(([k, v]) => [k, String(v)])),
        headers: request.headers,
        body: (request as Watched)[SENT_BODY]
      }))
    }
    exchangeCounts.ms += performance.now() - started
    for (const problem of problems) report(problem)
  }
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const hidden = (route.schema as { hide?: boolean } | undefined)?.hide === true
    routes.push(`${[route.method].flat().join(',')} ${route.url} ${hidden}`)
    if (hidden) return
    const template = documentPath(route.url)
    const lastWord: onSendHookHandler = function (request, reply, payload, done) {
      try {
        check(request, reply, payload, template)
      } finally {
        done(null, payload)
      }
    }
    // Route hooks run after the instance's: this one sees the answer as it leaves.
    route.onSend = [...hookList(route.onSend), lastWord]
    route.preValidation = [keepBody, ...hookList(route.preValidation)]
  })
}
