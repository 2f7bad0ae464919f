// What the OpenAPI document says of every operation beyond its own schema, derived from the
// route's configuration so that a new route is documented whole without writing it out: its
// operationId, the statuses the service's shared machinery can answer on it (body limits, path
// parameter limits, authentication, throttling, load shedding) and their headers.
import { operationName } from '../auth/platform-methods.js'
import { UNICODE_PATTERN_KEYWORD } from './unicode-pattern.js'

/** What the document needs to know of a route, read from its options. */
export interface RouteFacts {
  method: string
  url: string
  /** It needs a signed-in caller (a `security` requirement). */
  secured: boolean
  /** Its method carries a body (Fastify reads one: not GET or HEAD). */
  takesBody: boolean
  /** Its URL has path parameters. */
  hasParams: boolean
  /** The load shedder may refuse it (503); false for liveness. */
  shed: boolean
  /** It answers errors of its own shape for every status it declares (the OAuth token endpoint): nothing is added. */
  ownErrors: boolean
  /** A write: a method that changes state, or a GET marked as one (GET /logout). */
  writes: boolean
}

const BODYLESS = new Set(['GET', 'HEAD'])

/** The facts of a route from its method, URL, schema and config. */
export function routeFacts (route: { method: string, url: string, secured: boolean, neverShed?: boolean, ownErrors?: boolean, changesState?: boolean }): RouteFacts {
  return {
    method: route.method,
    url: route.url,
    secured: route.secured,
    takesBody: !BODYLESS.has(route.method.toUpperCase()),
    hasParams: /[:*]/.test(route.url),
    shed: route.neverShed !== true,
    ownErrors: route.ownErrors === true,
    writes: !BODYLESS.has(route.method.toUpperCase()) || route.changesState === true
  }
}

/**
 * The error statuses the service's shared machinery can answer on a route, whatever its handler:
 * - 400: a malformed URL or query string, an input its schema refuses (every route);
 * - 413 (body over the limit) and 415 (not JSON) where the method carries a body;
 * - 414: a path parameter too long, where the URL has any;
 * - 401 (no or bad credentials) and 429 (failed logins throttled) where a signed-in caller is needed;
 * - 403 on a secured write: one authenticated by the session cookie from another origin is refused;
 * - 503: overloaded (load shedding) or the database out of reach, except on liveness.
 */
export function derivedStatuses (facts: RouteFacts): number[] {
  if (facts.ownErrors) return []
  const statuses = [400]
  if (facts.secured) statuses.push(401, 429)
  if (facts.secured && facts.writes) statuses.push(403)
  if (facts.takesBody) statuses.push(413, 415)
  if (facts.hasParams) statuses.push(414)
  if (facts.shed) statuses.push(503)
  return statuses.sort((a, b) => a - b)
}

/** Capitalised: `branchName` -> `BranchName`. */
const capitalised = (word: string): string => word.slice(0, 1).toUpperCase() + word.slice(1)

/**
 * Hands out operationIds: the platform's method name (as whoami's `methods` lists it) where the
 * platform has one, else one made from the method and the path in the same style. Two routes that
 * would share one (`POST .../branches` and `POST .../branches/:branchName`) are told apart by the
 * last path parameter, then by a number; the same route always gets the same id.
 */
export class OperationIds {
  private readonly byId = new Map<string, string>()
  private readonly byRoute = new Map<string, string>()

  idFor (method: string, url: string): string {
    const key = `${method.toUpperCase()} ${url}`
    const known = this.byRoute.get(key)
    if (known !== undefined) return known
    const base = operationName(method.toUpperCase(), url).name
    const params = url.split('/').filter((s) => s.startsWith(':')).map((s) => s.slice(1).replace(/[^A-Za-z0-9]/g, ''))
    const last = params.at(-1)
    const candidates = [base, ...(last === undefined ? [] : [`${base}By${capitalised(last)}`])]
    let id = candidates.find((c) => !this.byId.has(c))
    for (let n = 2; id === undefined; n++) id = this.byId.has(`${base}${n}`) ? undefined : `${base}${n}`
    this.byId.set(id, key)
    this.byRoute.set(key, id)
    return id
  }
}

/** A list's bracket filters: the fields they may name and each value's bounds. */
export interface BracketFilters {
  fields: readonly string[]
  maxValueLength: number
  ops: ReadonlyArray<{ op: string, set: boolean, description: string }>
  maxValues: number
}

/** What the document's last pass needs of an operation, keyed by its operationId. */
export interface OperationFacts extends RouteFacts {
  /** The body schema has a required field (a missing body is refused); undefined: no body schema. */
  bodyRequired?: boolean
  brackets?: BracketFilters
}

// The parts of an OpenAPI 3.0 document this pass reads and writes.
interface Parameter { name: string, in: string, required?: boolean, schema?: Record<string, unknown>, [key: string]: unknown }
interface Response { description?: string, headers?: Record<string, unknown>, content?: Record<string, unknown> }
interface Operation {
  operationId?: string
  parameters?: Parameter[]
  requestBody?: { required?: boolean, content?: Record<string, unknown>, description?: string }
  responses?: Record<string, Response>
}
export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>
  [key: string]: unknown
}

const RETRY_AFTER = { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } }

/** What each status means wherever the service answers it, and the headers it comes with. */
export const STATUS_MEANINGS: Readonly<Record<string, { description: string, headers?: Record<string, unknown> }>> = {
  200: { description: 'Success.' },
  400: { description: 'Bad request: the URL, a parameter or the body is malformed or out of bounds; `message` names the field.' },
  401: {
    description: 'Not authenticated: no credentials, or wrong or expired ones.',
    headers: { 'WWW-Authenticate': { description: 'The challenge: `Basic realm="..."`.', schema: { type: 'string' } } }
  },
  403: { description: 'Forbidden: the caller lacks a role (or group) this operation needs, or a write authenticated by the session cookie came from another origin.' },
  404: { description: 'Not found.' },
  409: { description: 'Conflict with the current state: a name taken, a stale version (If-Match), something already there.' },
  413: { description: 'Payload too large: the body is over the service\'s limit (BODY_LIMIT).' },
  414: { description: 'URI too long: a path parameter is over the limit.' },
  415: { description: 'Unsupported media type: the body is not of a type this operation takes.' },
  429: { description: 'Too many failed logins from this client: wait for Retry-After.', headers: { 'Retry-After': RETRY_AFTER } },
  500: { description: 'Internal error.' },
  501: { description: 'Not implemented.' },
  502: { description: 'Bad gateway: the upstream service answered with an error or with something unexpected.' },
  503: {
    description: 'Service unavailable: overloaded, the database out of reach or an upstream busy; retry after Retry-After when given.',
    headers: { 'Retry-After': RETRY_AFTER }
  },
  504: { description: 'Gateway timeout: the upstream service did not answer in time.' }
}
const GENERIC_DESCRIPTIONS = new Set(['Default Response', 'Error'])

/** `equals[name]`, `in[name]`...: the bracket filters of a list, as query parameters a generated client can send. */
export function bracketParameters (brackets: BracketFilters): Parameter[] {
  return brackets.fields.flatMap((field) => brackets.ops.map(({ op, set, description }) => {
    const value = { type: 'string', minLength: 1, maxLength: brackets.maxValueLength }
    return {
      name: `${op}[${field}]`,
      in: 'query',
      required: false,
      description: description.replace('%s', field),
      ...(set ? { style: 'form', explode: true, schema: { type: 'array', items: value, maxItems: brackets.maxValues } } : { schema: value })
    }
  }))
}

/**
 * The document's last pass, over what the route schemas made of it: parameters with a default
 * are optional; a body is required only where a missing one is refused, and a POST, PUT or PATCH
 * without a body schema takes an optional one it ignores; the bracket filters are parameters;
 * every answer has a description and the headers its status comes with.
 */
export function finishOperations (document: OpenApiDocument, facts: ReadonlyMap<string, OperationFacts>): void {
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item)) {
      const known = operation.operationId === undefined ? undefined : facts.get(operation.operationId)
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path' && parameter.schema?.default !== undefined) parameter.required = false
      }
      if (known?.brackets !== undefined) operation.parameters = [...(operation.parameters ?? []), ...bracketParameters(known.brackets)]
      if (known !== undefined && operation.requestBody !== undefined) operation.requestBody.required = known.bodyRequired !== false
      if (known?.bodyRequired === undefined && known?.takesBody === true && known.method !== 'DELETE' && operation.requestBody === undefined) {
        operation.requestBody = {
          required: false,
          description: 'None needed: a JSON object, if sent, is ignored.',
          content: { 'application/json': { schema: { type: 'object' } } }
        }
      }
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const meaning = STATUS_MEANINGS[status]
        if (meaning === undefined) continue
        if (response.description === undefined || GENERIC_DESCRIPTIONS.has(response.description)) response.description = meaning.description
        if (meaning.headers !== undefined) response.headers = { ...meaning.headers, ...response.headers }
      }
    }
  }
}

/** Keywords only the service's validator reads (a Unicode pattern): left out of the document. */
const SERVICE_ONLY_KEYWORDS = [UNICODE_PATTERN_KEYWORD]

/** `value` without the service-only keywords, at any depth (in place). */
export function withoutServiceKeywords (value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) withoutServiceKeywords(item)
  } else if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>
    for (const keyword of SERVICE_ONLY_KEYWORDS) delete record[keyword]
    for (const child of Object.values(record)) withoutServiceKeywords(child)
  }
}
