import { Type, type Static } from '@sinclair/typebox'
import { ErrorResponse, FreeFormObject } from './common.js'

// Adapter ids appear in paths and logs: a plain identifier, no separators or escapes.
export const AdapterId = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
  description: 'Adapter name: a letter or digit, then up to 63 letters, digits, ".", "_" or "-".',
  examples: ['nso-lab']
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

export const Adapter = Type.Object({
  id: AdapterId,
  baseUrl: Type.String(),
  username: Type.String(),
  timeoutMs: Type.Integer(),
  rejectUnauthorized: Type.Boolean(),
  ca: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' })
}, { description: 'An orchestrator adapter (the password is never returned).' })
export type Adapter = Static<typeof Adapter>

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
export const AdapterList = Type.Object({ results: Type.Array(Adapter), total: Type.Integer() })

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

export const RestActionResponse = Type.Array(Type.Object({
  result: Type.String({ description: 'The orchestrator\'s HTTP status, as text.', examples: ['201', '204', '200'] }),
  data: Type.Optional(Type.Unknown({ description: 'The orchestrator\'s body, when it sent one: parsed when JSON, else text.' }))
}), { description: 'One element per result.' })

export const RestQueryBody = Type.Object({
  params: Type.Object({ path: RelayPath, accept: MediaType }, { additionalProperties: false })
}, { additionalProperties: false })
export type RestQueryBody = Static<typeof RestQueryBody>

// restQuery answers with the orchestrator's document byte for byte, in its content type.
export const RestQueryResponse = {
  description: 'The orchestrator\'s document as it came: same Content-Type and bytes (JSON or XML).',
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

// The one error shape, plus what the orchestrator answered when it did.
export const UpstreamErrorResponse = Type.Composite([
  ErrorResponse,
  Type.Object({
    upstream: Type.Optional(Type.Object({
      status: Type.Integer({ description: 'The orchestrator\'s HTTP status.' }),
      body: Type.Unknown({ description: 'Its body untouched (e.g. ietf-restconf:errors): parsed when JSON, else text, null when empty.' })
    }))
  })
], { additionalProperties: true, description: 'Error; for an orchestrator error also its status and body.' })
