import fp from 'fastify-plugin'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import type { onRequestHookHandler } from 'fastify'
import { ServiceOverloaded } from '../../lib/http/errors.js'
import { hookList } from '../../lib/http/hook-list.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** True on routes that answer whatever the load (liveness). */
    neverShed?: boolean
  }
}

/** How often the event loop's delay and the heap are sampled. */
const SAMPLE_INTERVAL_MS = 1000
/** The delay histogram's resolution, taken off its mean (a loop that never waits still reads it). */
const RESOLUTION_MS = 10

/**
 * Answers 503 with Retry-After while the process is overloaded (event loop lagging, heap over
 * its bound), so clients back off instead of queueing into unbounded latency.
 *
 * The samples are taken on a timer from what needs no file: the event loop's delay histogram
 * and V8's heap statistics (process.memoryUsage() reads /proc for the RSS, and throws EMFILE
 * when the process is out of descriptors). A sample that fails anyway keeps the last values
 * and is logged; it never ends the process. Each route gets a check bound at registration that
 * compares two numbers.
 */
export default fp(async (fastify) => {
  const { LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS: maxDelay, LOAD_SHEDDING_MAX_HEAP_BYTES: maxHeap, LOAD_SHEDDING_RETRY_AFTER_S: retryAfter } = fastify.config
  if (maxDelay <= 0 && maxHeap <= 0) return

  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  histogram.enable()
  let eventLoopDelay = 0
  let heapUsed = 0
  let failing = false
  const sample = (): void => {
    try {
      // No sample at all in an interval: the loop was blocked for all of it.
      const mean = histogram.mean / 1e6
      eventLoopDelay = Number.isNaN(mean) ? Infinity : Math.max(0, mean - RESOLUTION_MS)
      histogram.reset()
      heapUsed = getHeapStatistics().used_heap_size
      failing = false
    } catch (err) {
      if (!failing) fastify.log.warn({ err }, 'load shedding: a sample failed; the last one stands')
      failing = true
    }
  }
  const timer = setInterval(sample, SAMPLE_INTERVAL_MS)
  timer.unref()
  fastify.addHook('onClose', (_instance, done) => {
    clearInterval(timer)
    histogram.disable()
    done()
  })

  const overloaded = (): boolean =>
    (maxDelay > 0 && eventLoopDelay > maxDelay) || (maxHeap > 0 && heapUsed > maxHeap)
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
