// npm run bench [-- name ...]: runs every scenario (or those whose name contains a given word),
// printing one JSON line each.
import { maintenanceWithAuth, startupEmbedded } from './foundation.js'
import { studioGet, studioPut } from './studio.js'
import { behindNginx, outageRecovery } from './ops.js'
import { gitInitWarm } from './git.js'
import { restQueryVsReplyFrom } from './orchestrator.js'
import { idleFootprint } from './footprint.js'

const scenarios: Record<string, () => Promise<void>> = {
  'ismaintenance-with-auth': maintenanceWithAuth,
  'startup-embedded': startupEmbedded,
  'studio-put': studioPut,
  'studio-get': studioGet,
  'behind-nginx': behindNginx,
  'database-outage-recovery': outageRecovery,
  'git-init-warm-vs-cli': gitInitWarm,
  'orchestrator-restquery': restQueryVsReplyFrom,
  'idle-rss': idleFootprint
}

const filters = process.argv.slice(2)
for (const [name, scenario] of Object.entries(scenarios)) {
  if (filters.length > 0 && !filters.some((f) => name.includes(f))) continue
  await scenario()
}
