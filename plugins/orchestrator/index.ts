// The orchestrator area's plugin: the adapters table (fastify.adaptersRepository), the adapter
// registry and its pools (adapter-pools.ts) closed on close, the HTTP client over them
// (fastify.orchestrator: the relay, RESTCONF), the JSON-RPC client over that, the platform's typed
// operations over both (fastify.nsoOperations), and the pools' metrics gauge.
import fp from 'fastify-plugin'
import { Gauge } from 'prom-client'
import { adaptersRepository, type AdaptersRepository } from './adapters-repository.js'
import { adapterPools } from './adapter-pools.js'
import { orchestratorClient, type OrchestratorClient } from './client.js'
import { jsonRpcClient } from './json-rpc.js'
import { nsoOperations, type NsoOperations } from './operations.js'

declare module 'fastify' {
  interface FastifyInstance {
    adaptersRepository: AdaptersRepository
    orchestrator: OrchestratorClient
    nsoOperations: NsoOperations
  }
}

export default fp(async (fastify) => {
  // Each write to an adapter drops the client's cached settings and pool of it (the client is made below).
  let forget = (_id: string): void => {}
  const repository = adaptersRepository(fastify.db, fastify.secrets, (id) => { forget(id) })
  fastify.decorate('adaptersRepository', repository)
  // Keys the adapters migrations/011 could not (ids beyond ASCII); look-alikes older than the keys
  // keep working by their exact id, and are named here so that an admin can remove one.
  for (const { id, keyHeldBy } of await repository.claimKeys()) {
    fastify.log.warn({ adapter: id, lookAlikeOf: keyHeldBy },
      `orchestrator adapter "${id}" is a look-alike of adapter "${keyHeldBy}" (created before look-alikes were refused); it answers only to its exact id`)
  }
  const pools = adapterPools({
    findAdapter: async (id) => await repository.findForRelay(id),
    cacheTtlMs: fastify.config.ORCHESTRATOR_ADAPTER_CACHE_TTL_MS,
    connections: fastify.config.ORCHESTRATOR_POOL_CONNECTIONS,
    poolIdleMs: fastify.config.ORCHESTRATOR_POOL_IDLE_MS,
    queueMax: fastify.config.ORCHESTRATOR_QUEUE_MAX,
    queueWaitMs: fastify.config.ORCHESTRATOR_QUEUE_WAIT_MS,
    tracer: fastify.tracer
  })
  forget = (id) => { pools.forget(id) }
  const client = orchestratorClient({ pools })
  fastify.decorate('orchestrator', client)
  fastify.decorate('nsoOperations', nsoOperations(client, jsonRpcClient(client), async () => await repository.ids()))
  fastify.addHook('onClose', async () => { await pools.close() })
  // /metrics is open to anyone unless METRICS_AUTH is on: adapter ids (names of sites and
  // customers) label the series only behind admin credentials; otherwise the pools are summed.
  // A digest of the id would not hide it: names are few and easy to guess (docs/orchestrator.md).
  const byAdapter = fastify.config.METRICS_AUTH
  new Gauge({
    name: 'orchestrator_pool_connections',
    help: byAdapter
      ? 'Connections of each orchestrator adapter pool: connected, free, requests pending or running, and calls queued for a connection'
      : 'Connections of the orchestrator adapter pools, summed: connected, free, requests pending or running, and calls queued for a connection',
    labelNames: byAdapter ? ['adapter', 'state'] : ['state'],
    registers: [fastify.metricsRegistry],
    collect () {
      this.reset()
      const totals: Record<string, number> = { connected: 0, free: 0, pending: 0, running: 0, queued: 0 }
      for (const { adapter, ...counts } of pools.poolStats()) {
        for (const [state, value] of Object.entries(counts)) {
          if (byAdapter) this.set({ adapter, state }, value)
          else totals[state] = (totals[state] ?? 0) + value
        }
      }
      if (!byAdapter) for (const [state, value] of Object.entries(totals)) this.set({ state }, value)
    }
  })
}, { name: 'orchestrator', dependencies: ['config', 'database', 'secrets', 'metrics'] })
