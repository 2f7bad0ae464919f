// npm run bench [-- name ...]: runs every scenario (or those whose name contains a given word),
// printing one JSON line each. npm run bench -- --against <commit> [name ...]: the per-request
// scenarios against a build of that commit, in the same run (bench/against.ts).
import { againstCommit } from './against.js'
import { maintenanceCostByPart, maintenanceWithAuth, startupEmbedded } from './foundation.js'
import { maintenanceBearerVsBasic } from './auth.js'
import { studioGet, studioPut } from './studio.js'
import { studioPutHistory, studioPutHistorySpread, studioVersionsPage } from './history.js'
import { behindNginx, outageRecovery } from './ops.js'
import { gitInitCold, gitInitWarm, gitPackIndex, gitUpdateRetrieveWarm } from './git.js'
import { jsonCheckVsJsonParse, largeAnswersVsReplyFrom, restQueryVsReplyFrom } from './orchestrator.js'
import { importColliding, listsAtScale } from './lists.js'
import { studioPageList } from './studio-page.js'
import { idleFootprint } from './footprint.js'
import { embeddedMaintenance } from './maintenance.js'
import { auditRelay200 } from './audit.js'

const scenarios: Record<string, () => Promise<void>> = {
  'ismaintenance-with-auth': maintenanceWithAuth,
  'ismaintenance-cost-by-part': maintenanceCostByPart,
  'ismaintenance-bearer-vs-basic': maintenanceBearerVsBasic,
  'startup-embedded': startupEmbedded,
  'studio-put': studioPut,
  'studio-get': studioGet,
  'studio-put-history': studioPutHistory,
  'studio-put-history-spread': studioPutHistorySpread,
  'studio-versions-page': studioVersionsPage,
  'behind-nginx': behindNginx,
  'database-outage-recovery': outageRecovery,
  'git-pack-index-vs-isomorphic-git': gitPackIndex,
  'git-init-cold-vs-cli': gitInitCold,
  'git-init-warm-vs-cli': gitInitWarm,
  'git-update-retrieve-warm-vs-cli': gitUpdateRetrieveWarm,
  'orchestrator-restquery': restQueryVsReplyFrom,
  'orchestrator-large-answers': largeAnswersVsReplyFrom,
  'orchestrator-json-check': jsonCheckVsJsonParse,
  'audit-relay-200': auditRelay200,
  'lists-100k': listsAtScale,
  'studio-page-list-100k-vs-10': studioPageList,
  'import-colliding': importColliding,
  'embedded-maintenance-100k': embeddedMaintenance,
  'idle-rss': idleFootprint
}

const args = process.argv.slice(2)
const against = args.indexOf('--against')
if (against >= 0) {
  const commit = args[against + 1]
  if (commit === undefined) throw new Error('--against needs a commit')
  await againstCommit(commit, args.filter((_, i) => i !== against && i !== against + 1))
  process.exit(0)
}
const filters = args
for (const [name, scenario] of Object.entries(scenarios)) {
  if (filters.length > 0 && !filters.some((f) => name.includes(f))) continue
  await scenario()
}
