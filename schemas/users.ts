import { Type, type Static } from '@sinclair/typebox'
import { component, Role } from './common.js'
import type { ListSpec } from '../lib/lists/grammar.js'
import { listQuerySchema, pageSchema } from './lists.js'

const Username = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._@-]+$' })
// Write-only: accepted in requests, never present in a response schema.
const Password = Type.String({ minLength: 8, maxLength: 256, writeOnly: true })
export const Group = Type.String({ minLength: 1, maxLength: 128 })
const Email = Type.Union([Type.String({ maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$' }), Type.Null()])

export const UserObject = component('User', Type.Object({
  username: Username,
  roles: Type.Array(Role, { uniqueItems: true }),
  groups: Type.Array(Group, { uniqueItems: true, maxItems: 256 }),
  email: Email,
  disabled: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' })
}, { description: 'A user (the password is never returned).' }))
export const User = Type.Ref(UserObject)
export type User = Static<typeof UserObject>

export const UserCreate = Type.Object({
  username: Username,
  password: Password,
  roles: Type.Optional(Type.Array(Role, { uniqueItems: true, default: [] })),
  groups: Type.Optional(Type.Array(Group, { uniqueItems: true, maxItems: 256, default: [] })),
  email: Type.Optional(Email),
  disabled: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export type UserCreate = Static<typeof UserCreate>

// Every field optional: what is absent stays as it is.
export const UserUpdate = Type.Object({
  password: Type.Optional(Password),
  roles: Type.Optional(Type.Array(Role, { uniqueItems: true })),
  groups: Type.Optional(Type.Array(Group, { uniqueItems: true, maxItems: 256 })),
  email: Type.Optional(Email),
  disabled: Type.Optional(Type.Boolean())
}, { additionalProperties: false, minProperties: 1 })
export type UserUpdate = Static<typeof UserUpdate>

export const UsernameParams = Type.Object({ username: Username })

/** The list language on users: sorted by username (the primary key's order), filtered on username or email. */
export const USER_LIST = {
  idField: 'username',
  fields: ['username', 'roles', 'groups', 'email', 'disabled', 'createdAt', 'updatedAt'],
  sortable: ['username'],
  defaultSort: 'username',
  filterable: ['username', 'email'],
  defaultFilterField: 'username',
  maxLimit: 100,
  maxValueLength: 254
} as const satisfies ListSpec

export const UserList = Type.Ref(component('UserPage', pageSchema(UserObject, 'The users of the page.')))

/** A page of GET /users. */
export const UserListQuery = listQuerySchema(USER_LIST)
