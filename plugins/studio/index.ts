// The studio plugin: the component groups repository as `fastify.componentGroupsRepository`.
import fp from 'fastify-plugin'
import { componentGroupsRepository, type ComponentGroupsRepository } from './component-groups-repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    componentGroupsRepository: ComponentGroupsRepository
  }
}

export default fp(async (fastify) => {
  fastify.decorate('componentGroupsRepository', componentGroupsRepository(fastify.db))
}, { name: 'component-groups-repository', dependencies: ['database'] })
