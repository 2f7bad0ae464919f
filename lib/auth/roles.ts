import type { Static } from '@sinclair/typebox'
import type { Role as RoleSchema } from '../../schemas/common.js'
import type { User } from '../../schemas/users.js'
import type { AuthMethod } from '../../schemas/auth.js'

export type Role = Static<typeof RoleSchema>

/** Writes studio documents and Git projects. */
export const WRITERS: readonly Role[] = ['admin', 'designer', 'apiwrite']
export const ADMINS: readonly Role[] = ['admin']

/** The caller of a request, as routes see it (`request.user`). */
export type AuthUser = Pick<User, 'username' | 'roles' | 'groups' | 'email'>

/** How the caller of a request authenticated (`request.auth`). */
export interface RequestAuth {
  method: AuthMethod
  /** The digest of the session or access token, when a token was used. */
  tokenDigest?: string
  /** The OAuth client the token was issued to. */
  clientId?: string
}

export function toAuthUser (user: User): AuthUser {
  const { username, roles, groups, email } = user
  return { username, roles, groups, email }
}

/** What the auth plugin sets on a request: its caller and how it authenticated, null on open routes. */
export interface RequestCaller { user: AuthUser | null, auth: RequestAuth | null }

/**
 * The caller of a request to a route of an authenticated scope (`requireAuthentication`), whose
 * hook set it before the handler runs. Throws when there is none: a handler of an open route
 * that asks for its caller is a mistake of this service, not of the request.
 */
export function callerOf (request: RequestCaller): { user: AuthUser, auth: RequestAuth } {
  const { user, auth } = request
  if (user === null || auth === null) throw new Error('a handler asked for the caller of a route that requires no authentication')
  return { user, auth }
}

/** True when `user` holds one of `allowed` (admin always does); any user when `allowed` is absent. */
export function mayAct (user: AuthUser, allowed: readonly Role[] | undefined): boolean {
  return allowed === undefined || user.roles.some((r) => r === 'admin' || allowed.includes(r))
}

// A character no username may hold (see schemas/users.ts): a service account's principal never
// names a user, so it never passes a check that the caller is a given user.
const SERVICE_ACCOUNT_PREFIX = 'serviceAccount:'

/** The username a service account's requests carry (`request.user.username`). */
export function serviceAccountPrincipal (clientId: string): string {
  return `${SERVICE_ACCOUNT_PREFIX}${clientId}`
}
