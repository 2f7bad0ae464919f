import fp from 'fastify-plugin'
import type { FastifyRequest, HTTPMethods, preValidationHookHandler, RouteOptions } from 'fastify'
import { JsonDuplicateKey, JsonTooDeep, JsonUnsafeNumber, NulCharacter, type HttpError } from '../../lib/http/errors.js'
import { describePath, findJsonTextProblem, findNulCharacter, MAX_BODY_DEPTH, MAX_NUMBER, type JsonTextProblem } from '../../lib/http/json-text.js'
import { hookList } from '../../lib/http/hook-list.js'

function refusal (problem: JsonTextProblem): HttpError {
  const field = describePath('body', problem.path)
  switch (problem.kind) {
    case 'duplicate-key': return new JsonDuplicateKey(field)
    case 'too-deep': return new JsonTooDeep(field, problem.limit)
    case 'unsafe-number': return new JsonUnsafeNumber(field, MAX_NUMBER)
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Whether the JSON text of the body escapes a NUL character: only then is the parsed body searched for one. */
    bodyMayHoldNul: boolean
  }
}

type Part = 'params' | 'query' | 'body'
const PART_NAMES = { params: 'params', query: 'querystring', body: 'body' } as const

// JSON can carry a NUL character only as the escape \u0000 (a raw control character is invalid
// JSON, which the parser refuses): a text without one needs no walk of the value parsed from it.
const NUL_ESCAPE = '\\u0000'

/** The first NUL character in the given parts of a request, as a 400. */
function nulRefusal (request: FastifyRequest, parts: readonly Part[]): HttpError | undefined {
  for (const part of parts) {
    if (part === 'body' && !request.bodyMayHoldNul) continue
    const path = findNulCharacter(request[part])
    if (path !== undefined) {
      return new NulCharacter(describePath(PART_NAMES[part], path))
    }
  }
  return undefined
}

// Fastify reads no body for these methods.
const BODYLESS: ReadonlySet<string> = new Set<HTTPMethods>(['GET', 'HEAD'])

/**
 * The parts of a request a route takes: path parameters when its URL has any, the query string
 * when its schema reads one, a body unless no method of it carries one. A part a route does not
 * take never reaches its handler, so it is not scanned.
 */
function partsTaken (route: RouteOptions): Part[] {
  const parts: Part[] = []
  if (/[:*]/.test(route.url)) parts.push('params')
  if (route.schema?.querystring !== undefined) parts.push('query')
  if ([route.method].flat().some((method) => !BODYLESS.has(method))) parts.push('body')
  return parts
}

/** Whether a body schema is an object whose fields are all optional. */
function optionalBody (schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false
  const { type, required } = schema as { type?: unknown, required?: unknown }
  return type === 'object' && (!Array.isArray(required) || required.length === 0)
}

/**
 * What every route accepts, before its own schema is checked:
 * - JSON bodies: an empty one (or only whitespace) is no body, as for a request without one, and
 *   no body is `{}` for a route whose body fields are all optional;
 *   a key given twice, nesting deeper than MAX_BODY_DEPTH or a number beyond 2^53 - 1 is a 400
 *   naming the field; then Fastify's own parser (which refuses `__proto__` and `constructor`).
 * - No NUL character in any path parameter, query parameter or body string (keys included) a
 *   route takes.
 */
export default fp(async (fastify) => {
  // The API speaks JSON only: any other body type is a 415, not a string handed to validation.
  fastify.removeContentTypeParser('text/plain')
  const parse = fastify.getDefaultJsonParser('error', 'error')
  fastify.decorateRequest('bodyMayHoldNul', false)
  fastify.removeContentTypeParser('application/json')
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string
    if (text.trim() === '') {
      done(null, undefined)
      return
    }
    const problem = findJsonTextProblem(text, MAX_BODY_DEPTH)
    if (problem !== undefined) {
      done(refusal(problem), undefined)
      return
    }
    request.bodyMayHoldNul = text.includes(NUL_ESCAPE)
    parse(request, text, done)
  })

  // Bound to each route as it is added, with what it takes: a route without input (the lightest
  // GETs) pays for no hook at all.
  fastify.addHook('onRoute', (route) => {
    const parts = partsTaken(route)
    if (parts.length === 0) return
    // No body where the route's body has no required field: the same as an empty object.
    const emptyBodyIsObject = parts.includes('body') && optionalBody(route.schema?.body)
    const checkInput: preValidationHookHandler = function (request, _reply, done) {
      if (emptyBodyIsObject && request.body === undefined) request.body = {}
      done(nulRefusal(request, parts))
    }
    route.preValidation = [checkInput, ...hookList(route.preValidation)]
  })
}, { name: 'request-input' })
