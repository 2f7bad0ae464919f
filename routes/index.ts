// Every route of the service and where it is mounted: the open ones, then those that need a
// signed-in caller.
import type { FastifyPluginAsync } from 'fastify'
import { requireAuthentication } from '../plugins/auth/index.js'
import healthRoutes from './health.js'
import loginRoutes from './auth/login.js'
import sessionRoutes from './auth/session.js'
import oauthClientRoutes from './auth/oauth-clients.js'
import usersRoutes from './users/index.js'
import configurationManagerRoutes from './configuration_manager/index.js'
import studioRoutes from './studio/component-groups.js'
import gitProjectsRoutes from './git/projects.js'
import gitBranchesRoutes from './git/branches.js'
import gitRepositoriesRoutes from './git/repositories.js'
import gitCredentialsRoutes from './git/credentials.js'
import orchestratorAdapterRoutes from './orchestrator_manager/adapters.js'
import orchestratorRelayRoutes from './orchestrator_manager/relay.js'
import auditRoutes from './audit/index.js'

const routes: FastifyPluginAsync = async (fastify) => {
  await fastify.register(healthRoutes)
  await fastify.register(loginRoutes)
  await fastify.register(async (api) => {
    requireAuthentication(api)
    await api.register(usersRoutes, { prefix: '/users' })
    await api.register(sessionRoutes)
    await api.register(oauthClientRoutes, { prefix: '/oauth/clients' })
    await api.register(configurationManagerRoutes, { prefix: '/configuration_manager' })
    await api.register(studioRoutes, { prefix: '/studio/component-groups' })
    await api.register(gitProjectsRoutes, { prefix: '/git' })
    await api.register(gitBranchesRoutes, { prefix: '/git' })
    await api.register(gitRepositoriesRoutes, { prefix: '/git' })
    await api.register(gitCredentialsRoutes, { prefix: '/users' })
    await api.register(orchestratorAdapterRoutes, { prefix: '/orchestrator_manager/adapters' })
    await api.register(orchestratorRelayRoutes, { prefix: '/orchestrator_manager' })
    await api.register(auditRoutes, { prefix: '/audit' })
  })
}

export default routes
