// The studio plugin: the component groups repository as `fastify.componentGroupsRepository`, with
// the history retention of the configuration.
import fp from 'fastify-plugin'
import { componentGroupsRepository, type ComponentGroupsRepository } from './component-groups-repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    componentGroupsRepository: ComponentGroupsRepository
  }
}

export default fp(async (fastify) => {
  const { STUDIO_HISTORY_MAX_VERSIONS: maxVersions, STUDIO_HISTORY_MAX_AGE_DAYS: maxAgeDays } = fastify.config
  fastify.decorate('componentGroupsRepository', componentGroupsRepository(fastify.db,
    maxAgeDays === undefined ? { maxVersions } : { maxVersions, maxAgeDays }))
}, { name: 'component-groups-repository', dependencies: ['config', 'database'] })
