import fp from 'fastify-plugin'
import fastifyMetricsModule from 'fastify-metrics'
import client from 'prom-client'
import { ADMINS } from './auth.js'

// A CommonJS module whose plugin is its `default` export.
const fastifyMetrics = fastifyMetricsModule.default

declare module 'fastify' {
  interface FastifyInstance {
    /** This instance's Prometheus registry: areas register their own metrics in it. */
    metricsRegistry: client.Registry
  }
}

/**
 * GET /metrics in Prometheus text format: request counts and latency by route and status,
 * process metrics, database pool use; areas add theirs to `fastify.metricsRegistry`.
 */
export default fp(async (fastify) => {
  // A registry per app instance, not prom-client's global one, so instances never share series.
  const registry = new client.Registry()
  fastify.decorate('metricsRegistry', registry)

  await fastify.register(fastifyMetrics, {
    endpoint: {
      method: 'GET',
      url: '/metrics',
      logLevel: 'warn',
      schema: { summary: 'Prometheus metrics', tags: ['operations'], hide: true },
      ...(fastify.config.METRICS_AUTH ? { onRequest: fastify.authenticate, config: { roles: ADMINS } } : {}),
      handler: async () => ''
    },
    defaultMetrics: { enabled: true, register: registry },
    routeMetrics: {
      // The histogram gives latency quantiles in PromQL; a summary would cost a t-digest per request.
      enabled: { histogram: true, summary: false },
      registeredRoutesOnly: true,
      routeBlacklist: ['/metrics'],
      overrides: {
        histogram: { name: 'http_request_duration_seconds', registers: [registry] },
        // Created by the plugin even when disabled; kept out of the global registry.
        summary: { registers: [registry] }
      }
    }
  })

  const db = fastify.db
  // Gauges are read at scrape time, so they cost nothing between scrapes.
  new client.Gauge({
    name: 'db_pool_connections',
    help: 'Database connections by state (total, idle) and queries waiting for one',
    labelNames: ['state'],
    registers: [registry],
    collect () {
      const { total, idle, waiting } = db.poolStats()
      this.set({ state: 'total' }, total)
      this.set({ state: 'idle' }, idle)
      this.set({ state: 'waiting' }, waiting)
    }
  })
}, { name: 'metrics', dependencies: ['config', 'database', 'auth'] })
