import { Type } from '@sinclair/typebox'
import type { FastifyInstance, onRequestHookHandler, RouteOptions } from 'fastify'
import { hookList } from '../../lib/http/hook-list.js'
import { mayAct, type AuthUser, type Role } from '../../lib/auth/roles.js'
import { SECURITY } from '../../lib/auth/schemes.js'
import { InvalidCredentials, RoleRequired } from '../../lib/auth/errors.js'
import { ErrorResponse } from '../../schemas/common.js'
import type { Credentials } from './credentials.js'

/** The `fastify.authorize` of these credentials: an onRequest hook that needs a user and, when given, one of `allowed`. */
export function authorizer (credentials: Credentials): (allowed?: readonly Role[]) => onRequestHookHandler {
  return function (allowed) {
    // Bound once per route: nothing about the route is looked up per request.
    const roleList = allowed?.join(', ') ?? ''
    const verdict = (user: AuthUser): Error | undefined => mayAct(user, allowed) ? undefined : new RoleRequired(roleList)
    return function authorize (request, reply, done) {
      credentials.identify(request, reply, (err, user) => {
        done(err ?? (user === undefined ? new InvalidCredentials() : verdict(user)))
      })
    }
  }
}

/**
 * Makes every route registered in `scope` after this call require credentials (Basic, or a
 * token as Bearer, cookie or query parameter) and the roles in its `config.roles`, and says so in
 * the OpenAPI document.
 */
export function requireAuthentication (scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    const roles = route.config?.roles
    // The table whoami reads what a caller may call from: the same roles as the hook below.
    for (const method of [route.method].flat()) scope.guardedRoutes.push({ method, url: route.url, ...(roles === undefined ? {} : { roles }) })
    // After the hooks every route already has (load shedding): an overloaded process refuses a
    // request before it pays for a password check.
    route.onRequest = [...hookList(route.onRequest), scope.authorize(roles)]
    documentSecurity(route, roles)
  })
}

function documentSecurity (route: RouteOptions, roles: readonly Role[] | undefined): void {
  const schema = route.schema ?? {}
  const errors: Record<number, unknown> = { 401: Type.Ref(ErrorResponse) }
  if (roles !== undefined) errors[403] = Type.Ref(ErrorResponse)
  const note = roles === undefined ? 'Any authenticated user.' : `Roles: ${roles.join(', ')} (admin always may).`
  const description = typeof schema.description === 'string' ? `${schema.description}\n\n${note}` : note
  route.schema = {
    ...schema,
    description,
    security: SECURITY,
    response: { ...errors, ...(schema.response as Record<number, unknown> | undefined) }
  }
}
