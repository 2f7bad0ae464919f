import { Type, type Static } from '@sinclair/typebox'
import type { ListSpec } from '../lib/lists/grammar.js'
import { listQuerySchema, pageSchema } from './lists.js'
import { ISO_DATE_PATTERN } from '../lib/audit/events.js'
import { component } from './common.js'

const AuditEventObject = component('AuditEvent', Type.Object({
  id: Type.Integer({ description: 'The order events were written in (shared by every instance).' }),
  time: Type.String({ format: 'date-time', description: 'When the request was received.' }),
  actor: Type.Union([Type.String(), Type.Null()], { description: 'The user who made the request (a service account\'s user); null when unknown.' }),
  serviceAccount: Type.Union([Type.String(), Type.Null()], { description: 'The OAuth client id when a service account made it.' }),
  address: Type.String({ description: 'The client address, as TRUST_PROXY resolves it.' }),
  requestId: Type.String(),
  action: Type.String({ description: 'What was done, as area.verb: user.create, studio.replace, orchestrator.restAction, request.denied...' }),
  target: Type.String({ description: 'What it was done to: a username, a component group id, an adapter id, a repository path, a route.' }),
  outcome: Type.Union([Type.Literal('success'), Type.Literal('failure'), Type.Literal('denied')]),
  status: Type.Integer({ description: 'The status of the answer.' }),
  durationMs: Type.Number({ description: 'Time from receiving the request to the last byte of the answer.' }),
  details: Type.Union([Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])), Type.Null()],
    { description: 'Facts of the action (a commit id, the orchestrator\'s status); never a body or a secret.' })
}, { description: 'One audited request.' }))
export const AuditEvent = Type.Ref(AuditEventObject)
export type AuditEvent = Static<typeof AuditEventObject>

/** The list language on events: newest or oldest first, filtered on actor, action or target, indexed each. */
export const AUDIT_LIST = {
  idField: 'id',
  fields: ['id', 'time', 'actor', 'serviceAccount', 'address', 'requestId', 'action', 'target', 'outcome', 'status', 'durationMs', 'details'],
  // `time`: the events' write order (their id in the repository; `time` itself is not unique).
  sortable: ['time', 'id'],
  defaultSort: 'time',
  filterable: ['actor', 'action', 'target'],
  defaultFilterField: 'action',
  maxLimit: 100,
  maxValueLength: 1024
} as const satisfies ListSpec

const ListQuery = listQuerySchema(AUDIT_LIST)
const IsoDate = (description: string) => Type.Optional(Type.String({ maxLength: 40, pattern: ISO_DATE_PATTERN, description }))

/** A page of GET /audit: the list language and a time range. */
export const AuditListQuery = Type.Object({
  ...ListQuery.properties,
  order: Type.Integer({ enum: [1, -1], default: -1, description: '1: oldest first, -1: newest first (default).' }),
  from: IsoDate('Events at or after this time (ISO 8601: 2026-01-31 or 2026-01-31T12:00:00Z).'),
  to: IsoDate('Events before this time (ISO 8601).')
}, { additionalProperties: false })
export type AuditListQuery = Static<typeof AuditListQuery>

export const AuditList = Type.Ref(component('AuditEventPage', pageSchema(AuditEventObject, 'The events of the page.')))
