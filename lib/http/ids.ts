import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

// Identifiers in the platform's shape (a MongoDB ObjectId): 12 bytes as 24 lowercase hex digits,
// a 4-byte timestamp in seconds, 5 random bytes chosen once per process, a 3-byte counter.
// Ids made in the same second by one process differ by the counter, across processes by the
// random part; the timestamp makes them roughly ordered by creation.
export const OBJECT_ID_PATTERN = '^[0-9a-f]{24}$'
const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN)

const processPart = randomBytes(5)
let counter = randomBytes(3).readUIntBE(0, 3)

export function newObjectId (now: number = Date.now()): string {
  const id = Buffer.alloc(12)
  id.writeUInt32BE(Math.floor(now / 1000) % 0x1_0000_0000, 0)
  processPart.copy(id, 4)
  counter = (counter + 1) % 0x100_0000
  id.writeUIntBE(counter, 9, 3)
  return id.toString('hex')
}

export function isObjectId (value: string): boolean {
  return OBJECT_ID.test(value)
}

/**
 * What an `X-Request-Id` sent by a client or proxy must look like to be used as the request's id:
 * 1 to 64 letters, digits, `.`, `_`, `:` or `-` (a UUID, nginx's $request_id, a trace id). Any
 * other value (longer, or with spaces, quotes or control characters) would be copied into every
 * log line of the request; it is ignored and an id is made instead.
 */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/

export function isAcceptableRequestId (value: unknown): value is string {
  return typeof value === 'string' && REQUEST_ID_PATTERN.test(value)
}

/**
 * Request ids: the `X-Request-Id` of a request that came through a trusted proxy (`trusted`, the
 * peer's address: TRUST_PROXY) when it is short and safe (REQUEST_ID_PATTERN), otherwise 12 hex
 * digits chosen at random when the generator is made (once per process), a dash, then a counter
 * in base 36. A client that reaches the service directly never chooses its id (which the logs and
 * the audit trail record). Unique across instances and restarts for logging purposes, and far
 * cheaper per request than a random UUID.
 */
export function requestIdGenerator (trusted: (address: string, hop: number) => boolean = () => false): (request?: Pick<IncomingMessage, 'headers' | 'socket'>) => string {
  const prefix = randomBytes(6).toString('hex') + '-'
  let counter = 0
  return (request) => {
    const given = request?.headers['x-request-id']
    return isAcceptableRequestId(given) && trusted(request?.socket?.remoteAddress ?? '', 0) ? given : prefix + (++counter).toString(36)
  }
}
