import fp from 'fastify-plugin'
import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import type { IncomingMessage } from 'node:http'
import { connectionLimit, EMBEDDED_DATABASE_DESCRIPTORS, openFilesLimit, reservedDescriptors } from '../../lib/http/connection-limit.js'

/** Refusals and cut answers are logged as one summary line at most this often. */
const SUMMARY_INTERVAL_MS = 10_000

/** Whether a request announced a body that has not been received whole. */
function bodyUnread (raw: IncomingMessage): boolean {
  // A socket's request says false until its last byte came; an injected one (tests) has no such field.
  if ((raw.complete as boolean | undefined) !== false) return false
  const length = raw.headers['content-length']
  return (length !== undefined && length !== '0') || raw.headers['transfer-encoding'] !== undefined
}

function readDescriptorLimit (): number | undefined {
  try {
    return openFilesLimit(readFileSync('/proc/self/limits', 'utf8'))
  } catch {
    return undefined
  }
}

/**
 * What client connections may hold, beyond the deadlines of plugins/core/server-options.ts:
 *
 * - an answer whose pending output the client takes none of for HTTP_SEND_TIMEOUT_MS has its
 *   connection destroyed, and with it the memory of the unsent answer (an answer that makes
 *   progress, however long, is never cut);
 * - connections are limited below the file-descriptor limit (HTTP_MAX_CONNECTIONS, at most what the
 *   limit leaves after a reserve): past it a new connection is closed at once, and the open ones
 *   go on being served; a failed accept (EMFILE) is logged, never fatal;
 * - an answer sent before its request's body was received (a 401, a 413, a 503) closes the
 *   connection, so the service never waits for a body it will not read.
 */
export default fp(async (fastify) => {
  const config = fastify.config
  const server = fastify.server
  const log = fastify.log

  const reserve = reservedDescriptors({
    databasePool: config.DATABASE_URL === undefined ? EMBEDDED_DATABASE_DESCRIPTORS : config.DATABASE_POOL_SIZE,
    gitOperations: config.GIT_PROVIDER_CONCURRENCY,
    adapterPool: config.ORCHESTRATOR_POOL_CONNECTIONS
  })
  const limit = connectionLimit(readDescriptorLimit(), reserve, config.HTTP_MAX_CONNECTIONS)
  if (limit.connections !== Infinity) server.maxConnections = limit.connections
  if (limit.warning !== undefined) log.warn({ maxConnections: limit.connections, descriptors: limit.descriptors }, `connection limit: ${limit.warning}`)
  else log.debug({ maxConnections: limit.connections, descriptors: limit.descriptors, descriptorsRead: limit.descriptorsRead, reserve }, 'connection limit')

  // Counted between summaries.
  let refused = 0
  let acceptFailures = 0
  let cut = 0
  let lastSummary = 0
  const summarise = (now: number): void => {
    if (refused + acceptFailures + cut === 0 || now - lastSummary < SUMMARY_INTERVAL_MS) return
    lastSummary = now
    if (refused + acceptFailures > 0) {
      log.warn({ refused, acceptFailures, maxConnections: limit.connections }, 'connections refused: the process is at its connection or descriptor limit')
    }
    if (cut > 0) log.warn({ cut, sendTimeoutMs: config.HTTP_SEND_TIMEOUT_MS }, 'answers cut: their clients took none of their output in time')
    refused = 0
    acceptFailures = 0
    cut = 0
  }

  server.on('drop', () => {
    refused++
    summarise(Date.now())
  })
  // An accept that fails (out of descriptors: the kernel keeps the connection waiting, or libuv
  // closes it) is reported as an error of the server, which would end the process unhandled.
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.syscall === 'accept') {
      acceptFailures++
      summarise(Date.now())
    } else {
      log.error({ err }, 'server error')
    }
  })

  // Sockets with output pending: how much, and since when none of it was taken.
  const sockets = new Map<Socket, { pending: number, since: number }>()
  server.on('connection', (socket: Socket) => {
    sockets.set(socket, { pending: 0, since: Date.now() })
    socket.once('close', () => { sockets.delete(socket) })
  })
  const sendTimeout = config.HTTP_SEND_TIMEOUT_MS
  const sweep = (): void => {
    const now = Date.now()
    for (const [socket, state] of sockets) {
      const pending = socket.writableLength
      if (pending === 0 || pending < state.pending) state.since = now
      state.pending = pending
      if (pending > 0 && now - state.since >= sendTimeout) {
        sockets.delete(socket)
        socket.destroy()
        cut++
      }
    }
    summarise(now)
  }
  const timer = setInterval(sweep, Math.max(25, Math.min(1000, Math.floor(sendTimeout / 4))))
  timer.unref()
  fastify.addHook('onClose', (_instance, done) => {
    clearInterval(timer)
    done()
  })

  fastify.addHook('onSend', (request, reply, _payload, done) => {
    if (bodyUnread(request.raw)) void reply.header('connection', 'close')
    done()
  })
}, { name: 'connections', dependencies: ['config'] })
