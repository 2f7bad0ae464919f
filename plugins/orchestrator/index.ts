// The orchestrator area's plugin: the adapters registry (fastify.adaptersRepository), the relay's
// client (fastify.orchestrator) with its pools closed on close, and the pools' metrics gauge.
import fp from 'fastify-plugin'
import { Gauge } from 'prom-client'
import { adaptersRepository, type AdaptersRepository } from './adapters-repository.js'
import { orchestratorClient, type OrchestratorClient } from './client.js'

declare module 'fastify' {
  interface FastifyInstance {
    adaptersRepository: AdaptersRepository
    orchestrator: OrchestratorClient
  }
}

export default fp(async (fastify) => {
  const repository = adaptersRepository(fastify.db, fastify.secrets)
  fastify.decorate('adaptersRepository', repository)
  const client = orchestratorClient({
    findAdapter: async (id) => await repository.findForRelay(id),
    cacheTtlMs: fastify.config.ORCHESTRATOR_ADAPTER_CACHE_TTL_MS,
    connections: fastify.config.ORCHESTRATOR_POOL_CONNECTIONS,
    poolIdleMs: fastify.config.ORCHESTRATOR_POOL_IDLE_MS
  })
  fastify.decorate('orchestrator', client)
  fastify.addHook('onClose', async () => { await client.close() })
  new Gauge({
    name: 'orchestrator_pool_connections',
    help: 'Connections of each orchestrator adapter pool: connected, free, and requests pending or running',
    labelNames: ['adapter', 'state'],
    registers: [fastify.metricsRegistry],
    collect () {
      this.reset()
      for (const { adapter, ...counts } of client.poolStats()) {
        for (const [state, value] of Object.entries(counts)) this.set({ adapter, state }, value)
      }
    }
  })
}, { name: 'orchestrator', dependencies: ['config', 'database', 'secrets', 'metrics'] })
