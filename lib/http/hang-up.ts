import type { IncomingMessage } from 'node:http'

/**
 * Whether the caller of a request has hung up: its connection is gone before the answer was
 * written. Fastify then runs no onResponse hook, and what is still sent reaches nobody.
 */
export function callerHungUp (request: { raw: Pick<IncomingMessage, 'socket'> }): boolean {
  return request.raw.socket?.destroyed === true
}
