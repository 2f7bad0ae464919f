import { Type, type Static } from '@sinclair/typebox'
import { Role } from './common.js'
import { CLIENT_ID_PATTERN } from '../lib/auth/tokens.js'
import { listQuerySchema, pageSchema, type ListSpec } from '../lib/lists/list-query.js'

const Username = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._@-]+$' })

/** POST /login, as the platform's clients send it. */
export const LoginBody = Type.Object({
  user: Type.Object({
    username: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.String({ minLength: 1, maxLength: 256, writeOnly: true })
  }, { additionalProperties: false })
}, { additionalProperties: false })
export type LoginBody = Static<typeof LoginBody>

export const SessionToken = Type.String({ description: 'The session token: send it as `Authorization: Bearer <token>`, the `token` cookie or `?token=`' })

export const AuthMethod = Type.Union(['basic', 'bearer', 'cookie', 'query'].map((m) => Type.Literal(m)), {
  description: 'How the request authenticated: Basic credentials, a Bearer token, the token cookie or the token query parameter'
})
export type AuthMethod = 'basic' | 'bearer' | 'cookie' | 'query'

export const WhoAmI = Type.Object({
  username: Type.String(),
  roles: Type.Array(Role),
  groups: Type.Array(Type.String()),
  email: Type.Union([Type.String(), Type.Null()]),
  authenticatedBy: AuthMethod,
  clientId: Type.Optional(Type.String({ description: 'The OAuth client, when the token was issued to one' }))
})

export const LogoutResult = Type.Object({
  loggedOut: Type.Boolean({ description: 'True when a session (the token the request carried) was ended' })
})

export const OAuthClient = Type.Object({
  client_id: Type.String({ pattern: CLIENT_ID_PATTERN }),
  username: Type.String({ description: 'The user the client acts as (its roles and groups)' }),
  name: Type.String(),
  createdBy: Type.String(),
  createdAt: Type.String({ format: 'date-time' })
})
export type OAuthClient = Static<typeof OAuthClient>

export const OAuthClientCreate = Type.Object({
  username: Username,
  name: Type.Optional(Type.String({ maxLength: 200, default: '' }))
}, { additionalProperties: false })

export const OAuthClientCreated = Type.Object({
  ...OAuthClient.properties,
  client_secret: Type.String({ description: 'Shown once: only its digest is stored' })
})

export const OAuthClientParams = Type.Object({ clientId: Type.String({ pattern: CLIENT_ID_PATTERN }) })

/**
 * The list language on OAuth clients: sorted by client_id (the primary key's order; the only
 * unique column), filtered on name (default), username or client_id.
 */
export const OAUTH_CLIENT_LIST: ListSpec = {
  idField: 'client_id',
  fields: ['client_id', 'username', 'name', 'createdBy', 'createdAt'],
  sortable: { client_id: 'client_id' },
  defaultSort: 'client_id',
  filterable: { name: 'name', username: 'username', client_id: 'client_id' },
  defaultFilterField: 'name',
  maxLimit: 100,
  maxValueLength: 200
}

export const OAuthClientList = pageSchema(OAuthClient, 'The OAuth clients of the page (never their secrets).')

/** A page of GET /oauth/clients. */
export const OAuthClientListQuery = listQuerySchema(OAUTH_CLIENT_LIST)

/** RFC 6749 section 4.4.2, form-encoded; the client may authenticate with HTTP Basic instead of the body. */
export const TokenRequest = Type.Object({
  grant_type: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String({ writeOnly: true })),
  scope: Type.Optional(Type.String())
})

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer()
})

/** RFC 6749 section 5.2. */
export const OAuthError = Type.Object({
  error: Type.Union(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'temporarily_unavailable']
    .map((e) => Type.Literal(e))),
  error_description: Type.Optional(Type.String())
})
