import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { databaseUnavailable } from '../lib/errors.js'
import { errorResponses } from '../schemas/common.js'

const Status = Type.Object({ status: Type.String() })

/** Liveness and readiness probes, open to all (load balancers and orchestrators call them). */
const health: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/health', {
    // Liveness must not fail under load: a restarted process would not be less loaded.
    config: { pressureHandler: () => undefined },
    schema: { summary: 'Liveness: the process answers', tags: ['health'], response: { 200: Status } }
  }, async () => ({ status: 'ok' }))

  fastify.get('/ready', {
    schema: {
      summary: 'Readiness: the database answers',
      tags: ['health'],
      response: { 200: Status, ...errorResponses(503) }
    }
  }, async () => {
    try {
      await fastify.db.query('SELECT 1')
    } catch (err) {
      throw databaseUnavailable(err)
    }
    return { status: 'ready' }
  })
}

export default health
