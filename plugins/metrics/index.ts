import fp from 'fastify-plugin'
import fastifyMetricsModule from 'fastify-metrics'
import type { onResponseHookHandler } from 'fastify'
import client from 'prom-client'
import { hookList } from '../../lib/http/hook-list.js'
import { ADMINS } from '../../lib/auth/roles.js'

// A CommonJS module whose plugin is its `default` export.
const fastifyMetrics = fastifyMetricsModule.default

declare module 'fastify' {
  interface FastifyInstance {
    /** This instance's Prometheus registry: areas register their own metrics in it. */
    metricsRegistry: client.Registry
  }
}

const METRICS_URL = '/metrics'

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
      url: METRICS_URL,
      logLevel: 'warn',
      schema: { summary: 'Prometheus metrics', tags: ['operations'], hide: true },
      ...(fastify.config.METRICS_AUTH ? { onRequest: fastify.authorize(ADMINS) } : {}),
      handler: async () => ''
    },
    defaultMetrics: { enabled: true, register: registry },
    // Route metrics are recorded below: fastify-metrics' own look the route up on every request
    // and keep a timer per request, which cost more than the lightest routes themselves.
    routeMetrics: { enabled: false }
  })

  // A histogram gives latency quantiles in PromQL (a summary would cost a t-digest per request).
  const requestDuration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'Request duration in seconds, by method, route and status',
    labelNames: ['method', 'route', 'status_code'],
    registers: [registry]
  })
  // Added to each route as it is registered, labelled with its pattern, not the raw URL. Fastify
  // already times every reply (reply.elapsedTime, in ms).
  fastify.addHook('onRoute', (route) => {
    if (route.url === METRICS_URL) return
    const label = route.url
    const observe: onResponseHookHandler = function (request, reply, done) {
      requestDuration.observe({ method: request.method, route: label, status_code: reply.statusCode }, reply.elapsedTime / 1000)
      done()
    }
    route.onResponse = [...hookList(route.onResponse), observe]
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
  // The embedded database's VACUUM and ANALYZE passes (a server's autovacuum has its own views).
  const maintenance = db.maintenance
  if (maintenance !== undefined) {
    new client.Counter({
      name: 'db_maintenance_passes_total',
      help: 'VACUUM and ANALYZE passes of the embedded database, by outcome (done, failed)',
      labelNames: ['outcome'],
      registers: [registry],
      collect () {
        const { passes, failures } = maintenance.state()
        this.reset()
        this.inc({ outcome: 'done' }, passes)
        this.inc({ outcome: 'failed' }, failures)
      }
    })
    new client.Counter({
      name: 'db_maintenance_seconds_total',
      help: 'Time the embedded database spent in VACUUM and ANALYZE passes, waits for an idle connection included',
      registers: [registry],
      collect () {
        this.reset()
        this.inc(maintenance.state().seconds)
      }
    })
  }
}, { name: 'metrics', dependencies: ['config', 'database', 'auth'] })
