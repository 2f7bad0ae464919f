import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'

/**
 * Answers 503 with Retry-After while the process is overloaded (event loop lagging, heap over
 * its bound), so clients back off instead of queueing into unbounded latency.
 */
export default fp(async (fastify) => {
  const { LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS, LOAD_SHEDDING_MAX_HEAP_BYTES, LOAD_SHEDDING_RETRY_AFTER_S } = fastify.config
  await fastify.register(underPressure, {
    maxEventLoopDelay: LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS,
    maxHeapUsedBytes: LOAD_SHEDDING_MAX_HEAP_BYTES,
    retryAfter: LOAD_SHEDDING_RETRY_AFTER_S,
    message: 'The service is overloaded; retry after the time in Retry-After'
  })
}, { name: 'load-shedding', dependencies: ['config'] })
