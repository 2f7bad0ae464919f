import Fastify from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { DestinationStream } from 'pino'
import type { Config } from './plugins/core/config.js'
import type { TracingOptions } from './plugins/core/tracing.js'
import { serverOptions } from './plugins/core/server-options.js'
import corePlugin from './plugins/core/index.js'
import databasePlugin from './plugins/database/index.js'
import secretKeyCheckPlugin from './plugins/core/secret-key-check.js'
import authPlugin from './plugins/auth/index.js'
import metricsPlugin from './plugins/core/metrics.js'
import auditPlugin from './plugins/audit/index.js'
import studioPlugin from './plugins/studio/index.js'
import gitPlugin from './plugins/git/index.js'
import orchestratorPlugin from './plugins/orchestrator/index.js'
import routes from './routes/index.js'
import webPlugin from './plugins/web/index.js'

export { REDACTED_PATHS } from './plugins/core/server-options.js'

/** Builds the service. The order matters: each block uses what the blocks above it decorate. */
export async function buildApp (config: Config, options: { logStream?: DestinationStream, tracing?: TracingOptions } = {}) {
  const app = Fastify(serverOptions(config, options.logStream)).withTypeProvider<TypeBoxTypeProvider>()

  // Core: configuration, traces, errors, request input checks, load shedding, public URL, OpenAPI, secrets.
  await app.register(corePlugin, { config, tracing: options.tracing })

  // Data and auth: the database (migrated), who the caller is and what it may do, the metrics
  // (which read the database's pool and guard /metrics with the admin role), and the audit trail
  // (which records who did what, and every denied request, on the routes added after it).
  await app.register(databasePlugin)
  // The secret key must be the one the database's secrets were sealed with (or refuse to start).
  await app.register(secretKeyCheckPlugin)
  await app.register(authPlugin)
  await app.register(metricsPlugin)
  await app.register(auditPlugin)

  // Areas, then the routes that use them.
  await app.register(studioPlugin)
  await app.register(gitPlugin)
  await app.register(orchestratorPlugin)
  await app.register(routes)
  // The studio page (dist/web) at /studio/ and /automation-studio/.
  await app.register(webPlugin)

  return app
}
