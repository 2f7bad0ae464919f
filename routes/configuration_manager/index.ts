import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { isMaintenanceBundle } from '../../lib/configuration/maintenance-version.js'

/** Configuration-manager status (spec 4.3). */
const configurationManager: FastifyPluginAsyncTypebox = async (fastify) => {
  const { CONFIG_MANAGER_BUNDLE_VERSION: version, CONFIG_MANAGER_MAINTENANCE: override } = fastify.config
  // Configuration does not change while the process runs: decide once.
  const maintenance = isMaintenanceBundle(version, override)

  fastify.get('/ismaintenance', {
    schema: {
      summary: 'Whether the current configuration-management bundle is a maintenance bundle',
      description: 'True when the bundle version\'s MAINTENANCE part (YEAR.FEATURE.MAINTENANCE) is above 0, ' +
        'unless CONFIG_MANAGER_MAINTENANCE overrides it.',
      tags: ['configuration_manager'],
      response: { 200: Type.Boolean() }
    }
  }, async () => maintenance)
}

export default configurationManager
