import { Type, type Static } from '@sinclair/typebox'
import { OBJECT_ID_PATTERN } from '../lib/http/ids.js'
import { pageQuerySchema, pageSchema } from './lists.js'
import { ComponentGroupObject } from './component-groups.js'
import { component } from './common.js'

const MAX_VERSION = 2_147_483_647

export const VersionEntry = Type.Object({
  _id: Type.String({ description: 'The component group\'s id.' }),
  version: Type.Integer({ minimum: 1, description: 'The version this change made (a delete: the one after the last).' }),
  action: Type.Union(['create', 'replace', 'import', 'restore', 'delete'].map((a) => Type.Literal(a)), { description: 'How the group changed.' }),
  actor: Type.Object({
    username: Type.String({ description: 'The user, or the service account, who made the change.' }),
    method: Type.String({ description: 'How it authenticated: basic, bearer, cookie or query.' }),
    clientId: Type.Optional(Type.String({ description: 'The OAuth client its token was issued to (a service account).' }))
  }),
  changedAt: Type.String({ format: 'date-time' }),
  name: Type.String({ description: 'The group\'s name after the change.' }),
  document: Type.Optional(Type.Object(ComponentGroupObject.properties, {
    description: 'The group as it was after the change (a delete: as it was when deleted). Only with include=document.'
  }))
}, { description: 'One version of a component group.' })
export type VersionEntry = Static<typeof VersionEntry>

export const VersionParams = Type.Object({
  id: Type.String({ pattern: OBJECT_ID_PATTERN }),
  version: Type.Integer({ minimum: 1, maximum: MAX_VERSION })
})

/** A page of versions: limit, skip, include / exclude; always newest first. */
export const VersionsQuery = pageQuerySchema(100)
export type VersionsQuery = Static<typeof VersionsQuery>

export const VersionsPage = Type.Ref(component('ComponentGroupVersionPage', pageSchema(VersionEntry, 'Versions, newest first; the documents only with include=document.')))
export const DeletedPage = Type.Ref(component('DeletedComponentGroupPage', pageSchema(VersionEntry, 'The deleted groups, the latest delete first: each one\'s delete entry.')))
export const Version = Type.Ref(component('ComponentGroupVersion', Type.Object(VersionEntry.properties, { description: 'One version, whole (with its document).' })))
