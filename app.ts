import Fastify, { type FastifyPluginAsync } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { DestinationStream } from 'pino'
import type { Config } from './plugins/core/config.js'
import type { TracingOptions } from './plugins/core/tracing.js'
import { serverOptions } from './plugins/core/server-options.js'
import corePlugin from './plugins/core/index.js'
import databasePlugin from './plugins/database/index.js'
import secretKeyCheckPlugin from './plugins/core/secret-key-check.js'
import authPlugin from './plugins/auth/index.js'
import metricsPlugin from './plugins/metrics/index.js'
import auditPlugin from './plugins/audit/index.js'
import studioPlugin from './plugins/studio/index.js'
import gitPlugin from './plugins/git/index.js'
import orchestratorPlugin from './plugins/orchestrator/index.js'
import routes from './routes/index.js'
import webPlugin from './plugins/web/index.js'

export { REDACTED_PATHS } from './plugins/core/server-options.js'

/**
 * The service's plugins after core, in the order they are registered: each block uses what the
 * blocks before it decorate. Data and auth: the database (migrated), who the caller is and what
 * it may do, the metrics (which read the database's pool and guard /metrics with the admin role),
 * and the audit trail (which records who did what, and every denied request, on the routes added
 * after it). Then the areas, and the routes that use them.
 */
export const APP_BLOCKS: ReadonlyArray<{ readonly name: string, readonly plugins: readonly FastifyPluginAsync[] }> = [
  { name: 'database', plugins: [databasePlugin, secretKeyCheckPlugin] },
  { name: 'auth', plugins: [authPlugin] },
  { name: 'metrics', plugins: [metricsPlugin] },
  { name: 'audit', plugins: [auditPlugin] },
  { name: 'areas', plugins: [studioPlugin, gitPlugin, orchestratorPlugin, routes, webPlugin] }
]

/** Builds the service: core (configuration, traces, errors, request input checks, load shedding, public URL, OpenAPI, secrets), then APP_BLOCKS in order. */
export async function buildApp (config: Config, options: { logStream?: DestinationStream, tracing?: TracingOptions } = {}) {
  const app = Fastify(serverOptions(config, options.logStream)).withTypeProvider<TypeBoxTypeProvider>()
  await app.register(corePlugin, { config, tracing: options.tracing })
  for (const block of APP_BLOCKS) {
    for (const plugin of block.plugins) await app.register(plugin)
  }
  return app
}
