// The errors of logging in, users and service accounts: each code once, with its status and message.
import { defineError, withDetails, type CatalogError, type CatalogErrorConstructor } from '../http/errors.js'

// Logging in
export const InvalidCredentials = defineError('INVALID_CREDENTIALS', 'Missing or invalid credentials', 401)
export const LoginFailed = defineError('LOGIN_FAILED', 'Wrong username or password', 401)
export const CrossOriginWriteRefused = defineError<[source: string]>('CROSS_ORIGIN_WRITE_REFUSED',
  'A write authenticated by the session cookie must come from this service\'s own pages (%s); other clients send the token as Authorization: Bearer', 403)
export const RoleRequired = defineError<[roles: string]>('ROLE_REQUIRED', 'This operation needs one of the roles: %s', 403)
const TooManyFailedLogins = defineError<[retryAfterS: number]>('TOO_MANY_FAILED_LOGINS', 'Too many failed logins; retry in %s s', 429)
const LoginBusy = defineError('LOGIN_BUSY', 'Too many logins are being checked; retry in a moment', 503)
export const CredentialCheckFailed = defineError('CREDENTIAL_CHECK_FAILED', 'Could not check the credentials', 500)

/** The 429 of a throttled login; the body repeats Retry-After as `retryAfter`. */
export function tooManyFailedLogins (retryAfterS: number): CatalogError {
  return withDetails(new TooManyFailedLogins(retryAfterS), { retryAfter: retryAfterS })
}

/** The 503 of a full line of password checks: nothing was checked or counted. */
export function loginBusy (): CatalogError {
  return withDetails(new LoginBusy(), { retryAfter: 1 })
}

// The OAuth token endpoint answers RFC 6749 5.2 objects: each of its errors names the `error` it
// is sent as (its code never reaches the body).
export type OAuthErrorName = 'invalid_request' | 'invalid_client' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope' | 'temporarily_unavailable'
const oauthNames = new Map<string, OAuthErrorName>()
function defineOAuthError (code: string, name: OAuthErrorName, message: string, statusCode: number): CatalogErrorConstructor<[]> {
  oauthNames.set(code, name)
  return defineError(code, message, statusCode)
}

/** The RFC 6749 `error` of one of the token endpoint's errors; undefined for any other error. */
export function oauthErrorName (err: unknown): OAuthErrorName | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? oauthNames.get(code) : undefined
}

export const OAuthClientAuthNotBasic = defineOAuthError('OAUTH_CLIENT_AUTH_NOT_BASIC', 'invalid_client', 'Client authentication supports HTTP Basic only', 401)
export const OAuthClientAuthMissing = defineOAuthError('OAUTH_CLIENT_AUTH_MISSING', 'invalid_client', 'Client authentication is missing (client_id and client_secret)', 401)
export const OAuthInvalidClient = defineOAuthError('OAUTH_INVALID_CLIENT', 'invalid_client', 'Unknown client or wrong secret', 401)
export const OAuthGrantTypeMissing = defineOAuthError('OAUTH_GRANT_TYPE_MISSING', 'invalid_request', 'grant_type is missing', 400)
export const OAuthUnsupportedGrantType = defineOAuthError('OAUTH_UNSUPPORTED_GRANT_TYPE', 'unsupported_grant_type', 'Only grant_type=client_credentials is supported', 400)
export const OAuthClientAuthenticatedTwice = defineOAuthError('OAUTH_CLIENT_AUTHENTICATED_TWICE', 'invalid_request', 'The client authenticated twice (HTTP Basic and client_secret in the body)', 400)
export const OAuthClientIdMismatch = defineOAuthError('OAUTH_CLIENT_ID_MISMATCH', 'invalid_request', 'client_id in the body differs from the authenticated client', 400)
export const OAuthInvalidScope = defineOAuthError('OAUTH_INVALID_SCOPE', 'invalid_scope', 'This service defines no scopes: a token carries its user\'s roles', 400)

// Service accounts
export const ServiceAccountNotFound = defineError<[clientId: string]>('SERVICE_ACCOUNT_NOT_FOUND', 'Service account "%s" not found', 404)

// Users
export const UserNotFound = defineError<[username: string]>('USER_NOT_FOUND', 'User "%s" not found', 404)
export const UserExists = defineError<[username: string]>('USER_EXISTS', 'User "%s" already exists', 409)
export const LastAdmin = defineError('LAST_ADMIN', 'The last enabled admin cannot be removed, disabled or demoted', 409)
