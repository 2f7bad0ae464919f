// Checks on orchestrator relay parameters (spec 2.4). They run before any byte goes upstream,
// so a caller can never make the relay talk to another host or smuggle headers.

import type { CheckResult } from '../http/check-result.js'

// Long enough for deep RESTCONF keypaths, short enough to bound work and logs.
export const MAX_RELAY_PATH_LENGTH = 2048
// Real media types are far shorter; the cap keeps a header value bounded.
export const MAX_MEDIA_TYPE_LENGTH = 255

export const RELAY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
export type RelayMethod = (typeof RELAY_METHODS)[number]

// The spec names POST as the usual action method, and the design makes it the default.
export const DEFAULT_RELAY_METHOD: RelayMethod = 'POST'

const fail = (reason: string): { ok: false; reason: string } => ({ ok: false, reason })

// C0 controls and DEL: CR/LF split headers, NUL truncates strings in some parsers.
const CONTROL_CHAR = /[\x00-\x1f\x7f]/
// Anything outside printable ASCII has to be percent-encoded on the request line.
const NON_ASCII = /[^\x00-\x7f]/
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/
// A '%' must start a two-hex-digit escape; anything else is parsed differently by different stacks.
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/
const PERCENT_ESCAPE = /%([0-9A-Fa-f]{2})/g
const ENCODED_CONTROL = /%(?:[01][0-9A-Fa-f]|7[Ff])/
// Upstream stacks may decode more than once; decoding until stable catches %252e%252e too.
const MAX_DECODE_ROUNDS = 5

// Decodes %XX escapes byte by byte; never throws on bytes that are not UTF-8.
function percentDecodeOnce (s: string): string {
  return s.replace(PERCENT_ESCAPE, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
}

// A '.' or '..' segment (also as '..;param') would be resolved away by some upstream stack: at the
// start or after a '/', one or two dots, then a ';', a '/' or the end.
const DOT_SEGMENT = /(?:^|\/)\.\.?(?=[;/]|$)/

function hasDotSegment (pathPart: string): boolean {
  return DOT_SEGMENT.test(pathPart)
}

/** Checks params.path: a path (plus optional query) on the adapter's own host. Returns it unchanged. */
export function checkRelayPath (path: unknown, field = 'params.path'): CheckResult<string> {
  if (typeof path !== 'string') return fail(`${field} must be a string`)
  if (path.length === 0) return fail(`${field} must not be empty`)
  if (path.length > MAX_RELAY_PATH_LENGTH) {
    return fail(`${field} must be at most ${MAX_RELAY_PATH_LENGTH} characters`)
  }
  if (CONTROL_CHAR.test(path)) return fail(`${field} must not contain control characters`)
  if (path.includes(' ')) return fail(`${field} must not contain spaces`)
  if (NON_ASCII.test(path)) return fail(`${field} must be ASCII (percent-encode other characters)`)
  if (path.includes('\\')) return fail(`${field} must not contain a backslash`)
  if (!path.startsWith('/')) {
    if (SCHEME.test(path)) return fail(`${field} must not carry a scheme`)
    return fail(`${field} must start with '/'`)
  }
  if (path.startsWith('//')) return fail(`${field} must not carry an authority ('//')`)
  if (path.includes('#')) return fail(`${field} must not carry a fragment ('#')`)
  if (BAD_PERCENT.test(path)) return fail(`${field} has an invalid percent-encoding`)

  const queryAt = path.indexOf('?')
  let pathPart = queryAt === -1 ? path : path.slice(0, queryAt)
  let whole = path
  for (let round = 0; round < MAX_DECODE_ROUNDS; round++) {
    if (hasDotSegment(pathPart)) return fail(`${field} must not contain '.' or '..' segments`)
    if (pathPart.startsWith('//')) return fail(`${field} must not carry an authority ('//')`)
    if (pathPart.includes('\\')) return fail(`${field} must not contain an encoded backslash`)
    // Without a '%' there is nothing left to decode (pathPart is a prefix of whole, decoded alike).
    if (!whole.includes('%')) break
    if (ENCODED_CONTROL.test(whole)) return fail(`${field} must not contain encoded control characters`)
    const nextPart = percentDecodeOnce(pathPart)
    const nextWhole = percentDecodeOnce(whole)
    if (nextPart === pathPart && nextWhole === whole) break
    pathPart = nextPart
    whole = nextWhole
  }
  return { ok: true, value: path }
}

// RFC 9110 token (tchar) and quoted-string, without HTAB and obs-text: a header value we forward
// must stay plain printable ASCII.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const QUOTED_STRING = '"(?:[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\x20-\\x7E])*"'
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?: *; *${TOKEN}=(?:${TOKEN}|${QUOTED_STRING}))*$`)

/** Checks a media type (params.accept, params.contentType) before it becomes a request header. */
export function checkMediaType (value: unknown, field: string): CheckResult<string> {
  if (typeof value !== 'string') return fail(`${field} must be a string`)
  if (value.length === 0) return fail(`${field} must not be empty`)
  if (value.length > MAX_MEDIA_TYPE_LENGTH) {
    return fail(`${field} must be at most ${MAX_MEDIA_TYPE_LENGTH} characters`)
  }
  if (CONTROL_CHAR.test(value)) return fail(`${field} must not contain control characters`)
  if (NON_ASCII.test(value)) return fail(`${field} must be ASCII`)
  if (!MEDIA_TYPE.test(value)) {
    return fail(`${field} must be a media type 'type/subtype' with optional '; name=value' parameters`)
  }
  return { ok: true, value }
}

/** Normalises params.method: case-insensitive, one of RELAY_METHODS, POST when absent. */
export function normaliseRelayMethod (method: unknown, field = 'params.method'): CheckResult<RelayMethod> {
  if (method === undefined || method === null) return { ok: true, value: DEFAULT_RELAY_METHOD }
  if (typeof method !== 'string') return fail(`${field} must be a string`)
  const upper = method.toUpperCase()
  const known = RELAY_METHODS.find((m) => m === upper)
  if (known === undefined) return fail(`${field} must be one of ${RELAY_METHODS.join(', ')}`)
  return { ok: true, value: known }
}

/** Tells whether an upstream Content-Type is JSON (parsed for the reply) or not (kept as text). */
export function isJsonMediaType (contentTypeHeader: string | undefined): boolean {
  if (contentTypeHeader === undefined) return false
  const essence = contentTypeHeader.split(';')[0].trim().toLowerCase()
  const slash = essence.indexOf('/')
  if (slash <= 0) return false
  const subtype = essence.slice(slash + 1)
  return essence === 'application/json' || (subtype.endsWith('+json') && subtype.length > '+json'.length)
}

const essenceOf = (mediaType: string): string => (mediaType.split(';')[0] ?? '').trim().toLowerCase()

function isXmlEssence (essence: string): boolean {
  return essence === 'application/xml' || essence === 'text/xml' || /^application\/[^/]+\+xml$/.test(essence)
}

/**
 * Whether an answer's Content-Type is what `accept` (one media type, checked by checkMediaType)
 * asked for: the same type, one its wildcard covers, or the same family (any JSON type for a JSON
 * accept, any XML type for an XML one: NSO answers `application/yang-data+json` to
 * `application/json`). An HTML page from a proxy is none of these; no Content-Type is none either.
 */
export function answersAccept (accept: string, contentType: string | undefined): boolean {
  if (contentType === undefined) return false
  const asked = essenceOf(accept)
  const got = essenceOf(contentType)
  if (asked === '*/*' || asked === got) return true
  if (asked.endsWith('/*')) return got.startsWith(asked.slice(0, -1))
  if (isJsonMediaType(asked)) return isJsonMediaType(got)
  return isXmlEssence(asked) && isXmlEssence(got)
}

export interface RelayActionParams {
  path: unknown;
  accept: unknown;
  method?: unknown;
  contentType?: unknown;
}

export interface CheckedActionParams {
  path: string;
  accept: string;
  method: RelayMethod;
  /**
   * The body's media type, a JSON one (the body is sent as JSON); the design falls back to
   * `accept` when none is given. Undefined for a method that sends no body (GET, DELETE).
   */
  contentType: string | undefined;
}

// These methods carry no body upstream: RESTCONF defines none for them, and a GET body has no
// meaning in HTTP (some servers refuse it). The `body` the caller must send is then ignored.
const BODYLESS: ReadonlySet<RelayMethod> = new Set<RelayMethod>(['GET', 'DELETE'])

/**
 * Whether a body's media type says JSON: `application/json` or `application/<anything>+json`
 * (`application/yang-data+json`, `application/vnd.yang.data+json`), parameters allowed.
 */
export function isJsonBodyMediaType (value: string): boolean {
  const essence = (value.split(';')[0] ?? '').trim().toLowerCase()
  return essence === 'application/json' || /^application\/[^/]+\+json$/.test(essence)
}

const JSON_BODY_TYPES = 'application/json, application/yang-data+json or application/vnd.yang.data+json, say'

export interface RelayQueryParams {
  path: unknown;
  accept: unknown;
}

export interface CheckedQueryParams {
  path: string;
  accept: string;
}

/** Checks all restAction params at once; the first problem found becomes the 400 message. */
export function checkActionParams (params: RelayActionParams): CheckResult<CheckedActionParams> {
  const path = checkRelayPath(params.path)
  if (!path.ok) return path
  const accept = checkMediaType(params.accept, 'params.accept')
  if (!accept.ok) return accept
  const method = normaliseRelayMethod(params.method)
  if (!method.ok) return method
  let contentType: string | undefined = accept.value
  if (params.contentType !== undefined && params.contentType !== null) {
    const checked = checkMediaType(params.contentType, 'params.contentType')
    if (!checked.ok) return checked
    contentType = checked.value
    if (!BODYLESS.has(method.value) && !isJsonBodyMediaType(contentType)) {
      return fail(`params.contentType must be a JSON media type (${JSON_BODY_TYPES}): the body is sent as JSON`)
    }
  } else if (!BODYLESS.has(method.value) && !isJsonBodyMediaType(contentType)) {
    return fail('params.contentType is needed: it defaults to params.accept, which is not a JSON media type, and the body ' +
      `is sent as JSON (set params.contentType to ${JSON_BODY_TYPES})`)
  }
  if (BODYLESS.has(method.value)) contentType = undefined
  return { ok: true, value: { path: path.value, accept: accept.value, method: method.value, contentType } }
}

/** Checks restQuery params (path and accept only). */
export function checkQueryParams (params: RelayQueryParams): CheckResult<CheckedQueryParams> {
  const path = checkRelayPath(params.path)
  if (!path.ok) return path
  const accept = checkMediaType(params.accept, 'params.accept')
  if (!accept.ok) return accept
  return { ok: true, value: { path: path.value, accept: accept.value } }
}
