import { Type, type Static } from '@sinclair/typebox'
import { component, ErrorResponse, FreeFormObject } from './common.js'
import { UNICODE_PATTERN_KEYWORD } from '../lib/http/unicode-pattern.js'
import type { ListSpec } from '../lib/lists/grammar.js'
import { listQuerySchema, pageSchema } from './lists.js'

// Adapter ids are names as users write them (`Local NSO`, `nso-lab_2`): letters (any script),
// digits, spaces inside and the punctuation names use. Never '/', '\\', '%', '?', '#' or control
// characters (paths carry ids URL-encoded, logs carry them as they are), never a leading or
// trailing space. Ids of the earlier, stricter rule stay valid.
export const ADAPTER_ID_MAX_LENGTH = 128
const ID_FIRST = '[\\p{L}\\p{N}]'
const ID_INNER = "[\\p{L}\\p{M}\\p{N} ._\\-()\\[\\]@+:,&']"
const ID_LAST = "[\\p{L}\\p{M}\\p{N}._\\-()\\[\\]@+:,&']"
export const ADAPTER_ID_PATTERN = `^${ID_FIRST}(?:${ID_INNER}{0,${ADAPTER_ID_MAX_LENGTH - 2}}${ID_LAST})?$`
/** What a JSON Schema regex without Unicode classes can say of the rule: none of the characters never allowed. */
const ADAPTER_ID_PORTABLE_PATTERN = '^[^/\\\\%?#\\u0000-\\u001f\\u007f]+$'
export const AdapterId = Type.String({
  minLength: 1,
  maxLength: ADAPTER_ID_MAX_LENGTH,
  // The document's pattern is the portable part of the rule (no '/', '\\', '%', '?', '#' or control
  // characters); the letter classes are checked by the service only.
  pattern: ADAPTER_ID_PORTABLE_PATTERN,
  [UNICODE_PATTERN_KEYWORD]: ADAPTER_ID_PATTERN,
  description: `Adapter name, up to ${ADAPTER_ID_MAX_LENGTH} characters: starts with a letter or digit; then letters, digits, ` +
    "spaces and . _ - ( ) [ ] @ + : , & '; no leading or trailing space, no '/', '\\\\', '%', '?', '#' or control " +
    'characters. URL-encoded in paths (`Local%20NSO`). Unique ignoring case, runs of spaces and Unicode form ' +
    '(`Local  NSO` cannot be created beside `Local NSO`); looked up exactly. Letters and digits are those of any script ' +
    '(Unicode letters, marks and numbers): the service checks that part of the rule, which the pattern here cannot express.',
  examples: ['nso-lab', 'Local NSO', 'nso-lab_2']
})

const BaseUrl = Type.String({
  minLength: 1,
  description: 'http(s) URL of the orchestrator, optionally with a base path; no credentials, query or fragment. ' +
    'Stored normalised (no trailing slash).',
  examples: ['https://nso.example.net:8888', 'http://127.0.0.1:8080/prefix']
})
// A Basic-auth user name cannot hold ':' (RFC 7617).
const Username = Type.String({ minLength: 1, maxLength: 256, pattern: '^[^:\\x00-\\x1f\\x7f]+$' })
// Write-only: accepted in requests, never present in a response schema.
const Password = Type.String({ minLength: 1, maxLength: 1024, writeOnly: true, description: 'Write-only; never returned.' })
const TimeoutMs = Type.Integer({
  minimum: 100,
  maximum: 600_000,
  description: 'Deadline of one relayed call, from sending to the last byte of the answer (504 after it).'
})
const RejectUnauthorized = Type.Boolean({ description: 'Verify the orchestrator\'s TLS certificate (https only).' })
const Ca = Type.String({
  maxLength: 262_144,
  description: 'PEM CA bundle trusted for this adapter (https only), instead of the system CAs.'
})

export const ADAPTER_DEFAULTS = { timeoutMs: 30_000, rejectUnauthorized: true } as const

const AdapterObject = component('Adapter', Type.Object({
  id: AdapterId,
  baseUrl: Type.String(),
  username: Type.String(),
  timeoutMs: Type.Integer(),
  rejectUnauthorized: Type.Boolean(),
  ca: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' })
}, { description: 'An orchestrator adapter (the password is never returned).' }))
export const Adapter = Type.Ref(AdapterObject)
export type Adapter = Static<typeof AdapterObject>

export const AdapterCreate = Type.Object({
  id: AdapterId,
  baseUrl: BaseUrl,
  username: Username,
  password: Password,
  timeoutMs: Type.Optional(Type.Integer({ ...TimeoutMs, default: ADAPTER_DEFAULTS.timeoutMs })),
  rejectUnauthorized: Type.Optional(Type.Boolean({ ...RejectUnauthorized, default: ADAPTER_DEFAULTS.rejectUnauthorized })),
  ca: Type.Optional(Type.Union([Ca, Type.Null()]))
}, { additionalProperties: false })
export type AdapterCreate = Static<typeof AdapterCreate>

// Every field optional: what is absent stays as it is. `ca: null` removes the CA bundle.
export const AdapterUpdate = Type.Object({
  baseUrl: Type.Optional(BaseUrl),
  username: Type.Optional(Username),
  password: Type.Optional(Password),
  timeoutMs: Type.Optional(TimeoutMs),
  rejectUnauthorized: Type.Optional(RejectUnauthorized),
  ca: Type.Optional(Type.Union([Ca, Type.Null()]))
}, { additionalProperties: false, minProperties: 1 })
export type AdapterUpdate = Static<typeof AdapterUpdate>

export const AdapterParams = Type.Object({ id: AdapterId })

/** The list language on adapters: sorted by id (the primary key's order), filtered on id or baseUrl. */
export const ADAPTER_LIST = {
  idField: 'id',
  fields: ['id', 'baseUrl', 'username', 'timeoutMs', 'rejectUnauthorized', 'ca', 'createdAt', 'updatedAt'],
  sortable: ['id'],
  defaultSort: 'id',
  filterable: ['id', 'baseUrl'],
  defaultFilterField: 'id',
  maxLimit: 100,
  maxValueLength: 2048
} as const satisfies ListSpec

export const AdapterList = Type.Ref(component('AdapterPage', pageSchema(AdapterObject, 'The adapters of the page (exclude=ca leaves their CA bundles out).')))
export const AdapterListQuery = listQuerySchema(ADAPTER_LIST)

// Relay bodies (spec 2.4, 4.4, 4.5). The schema checks shapes; lib/orchestrator/relay-request.ts checks values.
const RelayPath = Type.String({
  description: 'Path on the orchestrator, below the adapter\'s base URL, optionally with a query.',
  examples: ['/restconf/data/tailf-ncs:devices/device=ce0', '/api/running/devices?deep']
})
const MediaType = Type.String({ examples: ['application/yang-data+json', 'application/vnd.yang.data+json'] })

export const RelayParams = Type.Object({ adapterId: AdapterId })

export const RestActionBody = Type.Object({
  params: Type.Object({
    path: RelayPath,
    accept: MediaType,
    method: Type.Optional(Type.String({
      description: 'GET, POST, PUT, PATCH or DELETE, any case; default POST.',
      examples: ['POST', 'patch']
    })),
    contentType: Type.Optional(Type.String({ ...MediaType, description: 'Media type of the body; default: accept.' }))
  }, { additionalProperties: false }),
  body: FreeFormObject({
    description: 'Sent upstream as JSON with POST, PUT and PATCH; GET and DELETE send no body.'
  })
}, { additionalProperties: false })
export type RestActionBody = Static<typeof RestActionBody>

/** What a relay's answer says of the orchestrator's, beyond its body (routes/orchestrator_manager/relay.ts). */
const RelayHeaders = {
  'X-Orchestrator-Status': Type.String({ description: 'The orchestrator\'s HTTP status.' }),
  'X-Orchestrator-Location': Type.String({ description: 'The orchestrator\'s Location, verbatim, when it sent one.' }),
  'X-Cisco-NSO-Trace-ID': Type.String({ description: 'NSO\'s trace id, when it sent one.' })
}

export const RestActionResponse = Type.Array(Type.Ref(component('RelayResult', Type.Object({
  result: Type.String({ description: 'The orchestrator\'s HTTP status, as text.', examples: ['201', '204', '200'] }),
  data: Type.Optional(Type.Unknown({
    description: 'The orchestrator\'s body, when it sent one: JSON as it came (checked, never rewritten), any other type as text. ' +
      'Written as it arrives: a failure after the reply started cuts the reply short.'
  }))
}, { description: 'One result of the orchestrator.' }))), { description: 'One element per result.', headers: RelayHeaders })

export const RestQueryBody = Type.Object({
  params: Type.Object({ path: RelayPath, accept: MediaType }, { additionalProperties: false })
}, { additionalProperties: false })
export type RestQueryBody = Static<typeof RestQueryBody>

// restQuery answers with the orchestrator's document byte for byte, in its content type.
/** A query the orchestrator answered without a body (NSO's 204 for an empty container). */
const EmptyHeader = {
  'X-Orchestrator-Empty': Type.String({ description: '`true` when the orchestrator sent no body: a JSON query then answers `{}`.' })
}

export const RestQueryResponse = {
  description: 'The orchestrator\'s document as it came: same Content-Type and bytes (JSON or XML).',
  headers: { ...RelayHeaders, ...EmptyHeader },
  content: {
    '*/*': {
      schema: Type.Union([
        Type.Object({}, { additionalProperties: true }),
        Type.Array(Type.Unknown()),
        Type.String()
      ])
    }
  }
}

export const RestQueryEmptyResponse = Type.Null({
  description: 'The orchestrator sent no body (NSO\'s 204 for an empty container) to a query for a type other than JSON.',
  headers: { ...RelayHeaders, ...EmptyHeader }
})

// The one error shape, plus what the orchestrator answered when it did.
export const UpstreamErrorResponse = Type.Composite([
  ErrorResponse,
  Type.Object({
    upstream: Type.Optional(Type.Object({
      status: Type.Integer({ description: 'The orchestrator\'s HTTP status.' }),
      body: Type.Unknown({
        description: 'Its body untouched (e.g. ietf-restconf:errors): parsed when JSON, else text, null when empty. ' +
          'Only its first 64 KiB are read: a longer one is that much of it, as text.'
      }),
      truncated: Type.Optional(Type.Boolean({ description: 'Present (true) when the body was longer than 64 KiB.' })),
      traceId: Type.Optional(Type.String({ description: 'NSO\'s X-Cisco-NSO-Trace-ID, when it sent one.' }))
    })),
    nsoStatus: Type.Optional(Type.Integer({
      description: 'The orchestrator\'s status when the failure came after it (UPSTREAM_ANSWER_INTERRUPTED, or a deadline passed mid-answer): ' +
        'the orchestrator got the request and may have carried it out.'
    }))
  })
], { additionalProperties: true, description: 'Error; for an orchestrator error also its status and body.' })

/** An orchestrator's error relayed (502) or its answer cut off (504): with the relay's headers when the orchestrator had answered. */
export const RelayUpstreamErrorResponse = { ...UpstreamErrorResponse, headers: RelayHeaders }
