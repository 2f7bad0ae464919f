// Every route of the service and where it is mounted: the open ones, then those that need a
// signed-in caller. Studio and orchestrator routes are served twice, by the same handlers: under
// the contract's paths and under the platform's own (`/automation-studio`, `/nso_manager`), which
// the platform's clients and scripts call.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { aliasSchema } from '../lib/http/route-alias.js'
import healthRoutes from './health.js'
import loginRoutes from './auth/login.js'
import sessionRoutes from './auth/session.js'
import serviceAccountRoutes from './auth/service-accounts.js'
import usersRoutes from './users/index.js'
import configurationManagerRoutes from './configuration_manager/index.js'
import studioRoutes, { type ComponentGroupRoutesOptions } from './studio/component-groups.js'
import gitProjectsRoutes from './git/projects.js'
import gitBranchesRoutes from './git/branches.js'
import gitRepositoriesRoutes from './git/repositories.js'
import gitCredentialsRoutes from './git/credentials.js'
import orchestratorAdapterRoutes from './orchestrator_manager/adapters.js'
import orchestratorRelayRoutes from './orchestrator_manager/relay.js'
import orchestratorOperationRoutes from './orchestrator_manager/operations.js'
import auditRoutes from './audit/index.js'

/** The contract's prefix of an area and the platform's, for the same routes. */
const STUDIO = { primary: '/studio', platform: '/automation-studio' }
const ORCHESTRATOR = { primary: '/orchestrator_manager', platform: '/nso_manager' }
const PLATFORM_TAG = 'platform paths'

/**
 * Registers `register` under the platform's prefix in a scope of its own, where each route's
 * OpenAPI entry is marked as an alias of the contract's path (which stays the primary entry).
 */
async function platformPaths (api: FastifyInstance, area: { primary: string, platform: string },
  register: (scope: FastifyInstance, prefix: string) => Promise<unknown>): Promise<void> {
  await api.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      const primaryUrl = area.primary + route.url.slice(area.platform.length)
      const method = [route.method].flat().join(',')
      route.schema = aliasSchema(route.schema, { method, url: route.url, primaryUrl, tag: PLATFORM_TAG })
    })
    await register(scope, area.platform)
  })
}

const routes: FastifyPluginAsync = async (fastify) => {
  await fastify.register(healthRoutes)
  await fastify.register(loginRoutes)
  await fastify.register(async (api) => {
    api.requireAuthentication(api)
    await api.register(usersRoutes, { prefix: '/users' })
    await api.register(sessionRoutes)
    await api.register(serviceAccountRoutes, { prefix: '/oauth/serviceAccounts' })
    await api.register(configurationManagerRoutes, { prefix: '/configuration_manager' })
    await api.register(gitProjectsRoutes, { prefix: '/git' })
    await api.register(gitBranchesRoutes, { prefix: '/git' })
    await api.register(gitRepositoriesRoutes, { prefix: '/git' })
    await api.register(gitCredentialsRoutes, { prefix: '/users' })

    // Studio: /studio/component-groups and /automation-studio/component-groups; each one's edit
    // links point at its own UI path.
    const studio = async (scope: FastifyInstance, prefix: string): Promise<void> => {
      const options: ComponentGroupRoutesOptions = { prefix: `${prefix}/component-groups`, editPage: `${prefix}/` }
      await scope.register(studioRoutes, options)
    }
    await studio(api, STUDIO.primary)
    await platformPaths(api, STUDIO, studio)

    // Orchestrator: /orchestrator_manager/... and /nso_manager/... (relay, adapters, typed operations).
    const orchestrator = async (scope: FastifyInstance, prefix: string): Promise<void> => {
      await scope.register(orchestratorAdapterRoutes, { prefix: `${prefix}/adapters` })
      await scope.register(orchestratorRelayRoutes, { prefix })
      await scope.register(orchestratorOperationRoutes, { prefix })
    }
    await orchestrator(api, ORCHESTRATOR.primary)
    await platformPaths(api, ORCHESTRATOR, orchestrator)

    await api.register(auditRoutes, { prefix: '/audit' })
  })
}

export default routes
