// The orchestrator area's errors (adapters registry and relay): each code once, with its status
// and message. docs/errors.md lists them under "Orchestrator".
import { defineError } from '../http/errors.js'

// Adapters registry
export const InvalidAdapter = defineError<[reason: string]>('INVALID_ADAPTER', '%s', 400)
export const AdapterNotFound = defineError<[id: string]>('ADAPTER_NOT_FOUND', 'Orchestrator adapter "%s" not found', 404)
export const AdapterExists = defineError<[id: string]>('ADAPTER_EXISTS', 'Orchestrator adapter "%s" already exists', 409)
/** A look-alike of an existing id (lib/orchestrator/adapter-id.ts); the reply also carries `existingId`. */
export const AdapterNameTaken = defineError<[id: string, existing: string]>('ADAPTER_NAME_TAKEN',
  'Orchestrator adapter "%s" would be a look-alike of adapter "%s": ids differing only in case, spacing or Unicode form are the same id', 409)
export const AdapterSecretUnreadable = defineError<[id: string, reason: string]>('ADAPTER_SECRET_UNREADABLE',
  'The stored password of adapter "%s" was sealed with a key that neither SECRET_KEY nor SECRET_KEY_PREVIOUS ' +
  '(or their old names ORCHESTRATOR_SECRET_KEY, ORCHESTRATOR_SECRET_KEY_PREVIOUS) opens (%s). Give every instance the same ' +
  'SECRET_KEY (the key it replaced in SECRET_KEY_PREVIOUS), or store the password again.', 503)

// Relay
export const InvalidRelayParams = defineError<[reason: string]>('INVALID_RELAY_PARAMS', '%s', 400)
/** `answer` is the status with its reason phrase when it has one ("409 Conflict", "599"). */
export const UpstreamError = defineError<[id: string, answer: string]>('UPSTREAM_ERROR', 'Orchestrator adapter "%s" answered %s', 502)
export const UpstreamInvalidJson = defineError<[id: string, reason: string]>('UPSTREAM_INVALID_JSON',
  'Orchestrator adapter "%s" answered invalid JSON (%s)', 502)
export const UpstreamUnreachable = defineError<[id: string, detail: string]>('UPSTREAM_UNREACHABLE',
  'Could not reach orchestrator adapter "%s" (%s)', 502)
export const UpstreamResponseTooLarge = defineError<[id: string, maxBytes: number]>('UPSTREAM_RESPONSE_TOO_LARGE',
  'Orchestrator adapter "%s" answered with more than %s bytes', 502)
export const UpstreamUnsupportedEncoding = defineError<[id: string, coding: string]>('UPSTREAM_UNSUPPORTED_ENCODING',
  'Orchestrator adapter "%s" answered in Content-Encoding "%s", which the relay does not decode (gzip, deflate or br)', 502)
export const UpstreamInvalidEncoding = defineError<[id: string, reason: string]>('UPSTREAM_INVALID_ENCODING',
  'Orchestrator adapter "%s" answered a body its Content-Encoding does not decode (%s)', 502)
export const UpstreamTimeout = defineError<[id: string, timeoutMs: number]>('UPSTREAM_TIMEOUT',
  'Orchestrator adapter "%s" did not answer within %s ms', 504)
/** The status line came, the body did not come whole; the reply also carries `nsoStatus`. */
export const UpstreamAnswerInterrupted = defineError<[id: string, answer: string, detail: string]>('UPSTREAM_ANSWER_INTERRUPTED',
  'Orchestrator adapter "%s" answered %s, then the connection broke before its answer was complete (%s): ' +
  'the operation may have been carried out', 502)
export const UpstreamUnexpectedMediaType = defineError<[id: string, answer: string, contentType: string, accept: string]>('UPSTREAM_UNEXPECTED_MEDIA_TYPE',
  'Orchestrator adapter "%s" answered %s with a body of type %s where %s was asked for (a page of a proxy in front of it?)', 502)
// The relay's own line of calls waiting for a connection of an adapter's pool; the reply also
// carries `retryAfter` (and a Retry-After header).
export const RelayQueueFull = defineError<[id: string, running: number, waiting: number]>('RELAY_QUEUE_FULL',
  'Orchestrator adapter "%s" has %s calls under way and %s waiting for a connection: no more may wait (ORCHESTRATOR_QUEUE_MAX)', 503)
export const RelayQueueTimeout = defineError<[id: string, waitMs: number]>('RELAY_QUEUE_TIMEOUT',
  'No connection to orchestrator adapter "%s" came free within %s ms (ORCHESTRATOR_QUEUE_WAIT_MS)', 503)
/** Nobody reads the answer: it goes to the access log and the audit trail. */
export const RelayCallerGone = defineError<[id: string]>('RELAY_CALLER_GONE',
  'The caller left while its call to orchestrator adapter "%s" waited for a connection: the call was not sent', 499)
// Only the relay's client refuses calls while the instance closes.
export const ShuttingDown = defineError('SHUTTING_DOWN', 'The service is shutting down', 503)

// Typed operations (NSO Manager): checks the schema cannot make, and the device no adapter has.
export const InvalidOperationInput = defineError<[reason: string]>('INVALID_OPERATION_INPUT', '%s', 400)
export const DeviceNotFound = defineError<[device: string]>('DEVICE_NOT_FOUND', 'No orchestrator adapter has a device "%s"', 404)
/** runCommand(s): a device entry's failure, never the call's. */
export const UnsupportedNed = defineError<[device: string, nedId: string]>('UNSUPPORTED_NED',
  'Device "%s" has NED %s, whose live-status runs no show command here (IOS, IOS XR, NX-OS and ASA NEDs do)', 422)
