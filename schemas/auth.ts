import { Type, type Static } from '@sinclair/typebox'
import { component, Role } from './common.js'
import { Group } from './users.js'
import { CLIENT_ID_PATTERN } from '../lib/auth/tokens.js'
import type { ListSpec } from '../lib/lists/grammar.js'
import { listQuerySchema, pageSchema } from './lists.js'

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

/** A group of the caller, as the platform names it: groups are identified by name here, so `id` is the name. */
export const WhoAmIGroup = Type.Object({
  id: Type.String(),
  name: Type.String(),
  provenance: Type.String()
})

export const WhoAmIQuery = Type.Object({
  roles: Type.Optional(Type.Union([Type.Literal('names'), Type.Literal('ids')], {
    description: 'The platform\'s choice between role ids and role names; a role is identified by its name here, so both answer the names.'
  }))
})

export const WhoAmI = Type.Object({
  id: Type.String({ description: 'The username, or the client_id of a service account' }),
  provenance: Type.String({ description: '`local` for users, `oauth` for service accounts' }),
  username: Type.String(),
  firstname: Type.String({ description: 'The username, or the name of a service account (users have no first name here)' }),
  groups: Type.Array(WhoAmIGroup),
  roles: Type.Array(Role),
  routes: Type.Array(Type.String(), { description: 'The paths of this service the caller may call (with at least one method)' }),
  methods: Type.Record(Type.String(), Type.Array(Type.String()), {
    description: 'The operations the caller may call, by application, named as the platform names them (AutomationStudio.getComponentGroups, ...)'
  }),
  email: Type.Union([Type.String(), Type.Null()]),
  authenticatedBy: AuthMethod,
  clientId: Type.Optional(Type.String({ description: 'The service account, when the token was issued to one' }))
})

export const LogoutResult = Type.Object({
  loggedOut: Type.Boolean({ description: 'True when a session (the token the request carried) was ended' })
})

const ServiceAccountName = Type.String({ minLength: 1, maxLength: 200 })
const ServiceAccountDescription = Type.String({ maxLength: 1000 })
const ServiceAccountRoles = Type.Array(Role, { uniqueItems: true })
const ServiceAccountGroups = Type.Array(Group, { uniqueItems: true, maxItems: 256 })
const Actor = Type.Object({ username: Type.String() })

/** A service account as the platform lists it, with the roles and groups that its tokens carry. */
const ServiceAccountObject = component('ServiceAccount', Type.Object({
  client_id: Type.String({ pattern: CLIENT_ID_PATTERN }),
  name: Type.String(),
  description: Type.String(),
  roles: Type.Array(Role),
  groups: Type.Array(Type.String()),
  _meta: Type.Object({
    created: Type.String({ format: 'date-time' }),
    createdBy: Actor,
    updated: Type.String({ format: 'date-time' }),
    updatedBy: Actor
  })
}, { description: 'A service account (never its secret).' }))
export const ServiceAccount = Type.Ref(ServiceAccountObject)
export type ServiceAccount = Static<typeof ServiceAccountObject>

/** POST /oauth/serviceAccounts, as the platform's clients send it. */
export const ServiceAccountCreate = Type.Object({
  accountData: Type.Object({
    name: ServiceAccountName,
    description: Type.Optional(ServiceAccountDescription),
    roles: Type.Optional(ServiceAccountRoles),
    groups: Type.Optional(ServiceAccountGroups)
  }, { additionalProperties: false })
}, { additionalProperties: false })
export type ServiceAccountCreate = Static<typeof ServiceAccountCreate>

/** PATCH /oauth/serviceAccounts/:client_id: what is absent stays as it is. */
export const ServiceAccountUpdate = Type.Object({
  updates: Type.Object({
    name: Type.Optional(ServiceAccountName),
    description: Type.Optional(ServiceAccountDescription),
    roles: Type.Optional(ServiceAccountRoles),
    groups: Type.Optional(ServiceAccountGroups)
  }, { additionalProperties: false, minProperties: 1 })
}, { additionalProperties: false })
export type ServiceAccountUpdate = Static<typeof ServiceAccountUpdate>['updates']

/** The answer of create and regenerate: the secret is in it once, only its digest is stored. */
export const ServiceAccountCredentials = Type.Object({
  client_id: Type.String({ pattern: CLIENT_ID_PATTERN }),
  client_secret: Type.String({ description: 'Shown once: only its digest is stored' })
})

/** The platform's answer to an update or a delete. */
export const ServiceAccountStatus = Type.Object({
  status: Type.Literal('OK'),
  message: Type.String(),
  data: Type.Optional(ServiceAccount)
})

export const ServiceAccountParams = Type.Object({ client_id: Type.String({ pattern: CLIENT_ID_PATTERN }) })

/**
 * The list language on service accounts: sorted by client_id (the primary key's order; the only
 * unique column), filtered on name (default), description or client_id.
 */
export const SERVICE_ACCOUNT_LIST = {
  idField: 'client_id',
  fields: ['client_id', 'name', 'description', 'roles', 'groups', '_meta'],
  sortable: ['client_id'],
  defaultSort: 'client_id',
  filterable: ['name', 'description', 'client_id'],
  defaultFilterField: 'name',
  maxLimit: 100,
  maxValueLength: 200
} as const satisfies ListSpec

const page = pageSchema(ServiceAccountObject, 'The service accounts of the page (never their secrets).')
/** The page envelope, with the items also as `results`, the platform's name for them. */
export const ServiceAccountList = Type.Ref(component('ServiceAccountPage', Type.Object({ ...page.properties, results: page.properties.items })))

/** A page of GET /oauth/serviceAccounts. */
export const ServiceAccountListQuery = listQuerySchema(SERVICE_ACCOUNT_LIST)

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
