// The database plugin: opens the server named by DATABASE_URL or the embedded database, applies
// the migrations, decorates `fastify.db` and closes it with the app.
import fp from 'fastify-plugin'
import type { Config } from '../core/config.js'
import type { MaintenancePass } from './embedded-maintenance.js'
import { embeddedDb } from './embedded.js'
import { migrate } from './migrations.js'
import { postgresDb } from './postgres.js'
import { tracedDb } from './traced.js'
import type { Db } from './types.js'

export type { Db, Queryable, QueryOptions, QueryResult } from './types.js'
export { migrate, MIGRATIONS_DIR } from './migrations.js'

/** Opens the server named by DATABASE_URL, or the embedded database under DATA_DIR. */
export async function openDatabase (
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DATABASE_POOL_SIZE' | 'DATABASE_QUERY_TIMEOUT_MS'>,
  options: { onMaintenance?: (pass: MaintenancePass) => void } = {}
): Promise<Db> {
  return config.DATABASE_URL !== undefined
    ? postgresDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE, config.DATABASE_QUERY_TIMEOUT_MS)
    : await embeddedDb(config.DATA_DIR, config.DATABASE_QUERY_TIMEOUT_MS, options.onMaintenance)
}

declare module 'fastify' {
  interface FastifyInstance {
    db: Db
  }
}

export default fp(async (fastify) => {
  const log = fastify.log.child({ component: 'embedded-maintenance' })
  const db = await openDatabase(fastify.config, {
    onMaintenance: ({ error, durationMs, longestStepMs, tables }) => {
      const ms = { durationMs: Math.round(durationMs), longestStepMs: Math.round(longestStepMs), tables }
      if (error === undefined) log.info(ms, 'embedded database vacuumed and analyzed')
      else log.warn({ ...ms, err: error }, 'embedded database maintenance failed')
    }
  })
  // With traces on, a span per statement of the service's requests (the migrations run untraced).
  fastify.decorate('db', fastify.tracer === null ? db : tracedDb(db, fastify.tracer))
  fastify.addHook('onClose', async () => { await db.close() })
  const added = await migrate(db)
  if (added.length > 0) fastify.log.info({ migrations: added }, 'database migrations applied')
  // Statistics for rows never analyzed (written before a restart, or by an older version); in the background.
  await db.maintenance?.startIfNeverAnalyzed()
}, { name: 'database', dependencies: ['config', 'tracing'] })
