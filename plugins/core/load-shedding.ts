import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import type { onRequestHookHandler } from 'fastify'
import { ServiceOverloaded } from '../../lib/http/errors.js'
import { hookList } from '../../lib/http/hook-list.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** True on routes that answer whatever the load (liveness). */
    neverShed?: boolean
  }
}

/**
 * Answers 503 with Retry-After while the process is overloaded (event loop lagging, heap over
 * its bound), so clients back off instead of queueing into unbounded latency.
 *
 * @fastify/under-pressure samples the event loop and heap on its timer. Its own request hook
 * reads `request.routeOptions` (a new object each time) on every request, so it is given no
 * bound here; each route instead gets a check bound at registration that compares two numbers.
 */
export default fp(async (fastify) => {
  const { LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: maxDelay, LOAD_SHEDDING_MAX_HEAP_BYTES: maxHeap, LOAD_SHEDDING_RETRY_AFTER_S: retryAfter } = fastify.config
  await fastify.register(underPressure, {})
  if (maxDelay <= 0 && maxHeap <= 0) return

  const sample = fastify.memoryUsage
  const overloaded = (): boolean => {
    const { eventLoopDelay, heapUsed } = sample()
    return (maxDelay > 0 && eventLoopDelay > maxDelay) || (maxHeap > 0 && heapUsed > maxHeap)
  }
  const shed: onRequestHookHandler = function (_request, reply, done) {
    if (!overloaded()) { done(); return }
    reply.header('retry-after', String(retryAfter))
    done(new ServiceOverloaded())
  }
  fastify.addHook('onRoute', (route) => {
    if (route.config?.neverShed === true) return
    route.onRequest = [shed, ...hookList(route.onRequest)]
  })
}, { name: 'load-shedding', dependencies: ['config'] })
