import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { databaseUnavailable } from '../lib/http/errors.js'
import { errorResponses } from '../schemas/common.js'

const Status = Type.Object({ status: Type.String() })
const READY_TIMEOUT_MS = 2000

/** Liveness and readiness probes, open to all (load balancers and orchestrators call them). */
const health: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/health', {
    // Liveness must not fail under load: a restarted process would not be less loaded.
    config: { neverShed: true },
    schema: {
      summary: 'Liveness: the process answers',
      description: 'Never refused for load, never reads the database: a failure means the process should be restarted.',
      tags: ['health'],
      response: { 200: Status }
    }
  }, async () => ({ status: 'ok' }))

  fastify.get('/ready', {
    schema: {
      summary: 'Readiness: the database answers',
      description: 'A 503 while the database does not answer promptly: send no traffic to this instance meanwhile.',
      tags: ['health'],
      response: { 200: Status, ...errorResponses(503) }
    }
  }, async () => {
    // A probe must answer promptly: a database that takes this long is not ready, whatever it is.
    const timeout = AbortSignal.timeout(READY_TIMEOUT_MS)
    try {
      await Promise.race([
        fastify.db.query('SELECT 1'),
        new Promise((_resolve, reject) => { timeout.addEventListener('abort', () => { reject(timeout.reason) }) })
      ])
    } catch (err) {
      throw databaseUnavailable(err)
    }
    return { status: 'ready' }
  })
}

export default health
