// What the OpenAPI document says of every operation beyond its own schema, derived from the
// route's configuration so that a new route is documented whole without writing it out: its
// operationId, the statuses the service's shared machinery can answer on it (body limits, path
// parameter limits, authentication, throttling, load shedding) and their headers.
import { operationName } from '../auth/platform-methods.js'

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
}

const BODYLESS = new Set(['GET', 'HEAD'])

/** The facts of a route from its method, URL, schema and config. */
export function routeFacts (route: { method: string, url: string, secured: boolean, neverShed?: boolean, ownErrors?: boolean }): RouteFacts {
  return {
    method: route.method,
    url: route.url,
    secured: route.secured,
    takesBody: !BODYLESS.has(route.method.toUpperCase()),
    hasParams: /[:*]/.test(route.url),
    shed: route.neverShed !== true,
    ownErrors: route.ownErrors === true
  }
}

/**
 * The error statuses the service's shared machinery can answer on a route, whatever its handler:
 * - 400: a malformed URL or query string, an input its schema refuses (every route);
 * - 413 (body over the limit) and 415 (not JSON) where the method carries a body;
 * - 414: a path parameter too long, where the URL has any;
 * - 401 (no or bad credentials) and 429 (failed logins throttled) where a signed-in caller is needed;
 * - 503: overloaded (load shedding) or the database out of reach, except on liveness.
 */
export function derivedStatuses (facts: RouteFacts): number[] {
  if (facts.ownErrors) return []
  const statuses = [400]
  if (facts.secured) statuses.push(401, 429)
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
