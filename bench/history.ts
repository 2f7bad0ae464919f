// Component-group history scenarios, against the PostgreSQL server: a PUT that records its
// version (and, where the service has one, its audit event) against the same PUT on an instance
// with both off, all connections on one group and then each on a group of its own; and a page of
// 25 versions of a group with 10,000 against a GET of the group.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import type { ComponentGroupUpdate } from '../schemas/component-groups.js'
import { compare, loadEach, report, serverSchema, startServer, type ChildServer, type LoadOptions } from './measure.js'

const CONNECTIONS = 16
const ADMIN_PASSWORD = 'bench-admin-password'
const adminAuth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')
const designer = { username: 'bench-designer', password: 'bench-designer-password', roles: ['designer'], groups: ['netops'] }
const designerAuth = 'Basic ' + Buffer.from(`${designer.username}:${designer.password}`).toString('base64')
const VERSIONS = 10_000

const update: ComponentGroupUpdate = {
  name: 'Bench history routers',
  description: 'Core routers of the benchmark network',
  members: Array.from({ length: 20 }, (_, i) => ({ path: ['Network', 'Core', `Site ${i}`], type: 'folder' as const })),
  gbacRead: ['netops'],
  gbacWrite: ['netops'],
  meta: { owner: 'netops', ticket: 'NET-1234' }
}

async function post (url: string, auth: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`)
  return await response.json() as Record<string, unknown>
}

interface Instance { service: ChildServer, databaseUrl: string, id: string, ids: string[] }

// A service on a schema of its own with one designer and `groups` groups; everything dropped after.
async function withInstances (scenario: string, envs: Array<Record<string, string>>, fn: (instances: Instance[]) => Promise<void>, groups = 1): Promise<void> {
  const cleanups: Array<() => Promise<void>> = []
  try {
    const instances: Instance[] = []
    for (const [i, env] of envs.entries()) {
      const database = await serverSchema(`history${i}`)
      if (database === undefined) {
        report({ scenario, skipped: 'PostgreSQL server not reachable at BENCH_DATABASE_URL' })
        return
      }
      cleanups.push(database.drop)
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-history-'))
      cleanups.push(async () => { await rm(dataDir, { recursive: true, force: true }) })
      const service = await startServer('service', {
        DATABASE_URL: database.url, DATABASE_POOL_SIZE: String(CONNECTIONS), DATA_DIR: dataDir, ADMIN_PASSWORD, ...env
      })
      cleanups.push(service.stop)
      await post(`${service.url}/users`, adminAuth, designer)
      const ids: string[] = []
      for (let g = 0; g < groups; g++) {
        ids.push((await post(`${service.url}/studio/component-groups`, designerAuth, { componentGroup: named(g) }) as { created: { _id: string } }).created._id)
      }
      instances.push({ service, databaseUrl: database.url, id: ids[0] as string, ids })
    }
    await fn(instances)
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
}

// The update of the `g`th group of an instance (names are unique).
const named = (g: number): ComponentGroupUpdate => g === 0 ? update : { ...update, name: `${update.name} ${g}` }

const put = (instance: Instance, g = 0) => ({
  url: `${instance.service.url}/studio/component-groups/${instance.ids[g] as string}`,
  method: 'PUT' as const,
  headers: { authorization: designerAuth, 'content-type': 'application/json' },
  body: JSON.stringify({ update: named(g) }),
  ...(instance.service.child.pid === undefined ? {} : { pid: instance.service.child.pid })
})

// The time ratio: how much longer a request takes (the baseline's requests/s over the candidate's).
const timeRatio = (ratio: number): number => ratio === 0 ? 0 : Number((1 / ratio).toFixed(3))

export async function studioPutHistory (): Promise<void> {
  const scenario = 'studio-put-history'
  await withInstances(scenario, [{}, { STUDIO_HISTORY_MAX_VERSIONS: '0', AUDIT_ENABLED: 'false' }], async ([recorded, unrecorded]) => {
    const result = await compare(put(recorded as Instance), put(unrecorded as Instance), { connections: CONNECTIONS, seconds: 4, rounds: 5 })
    report({ scenario, target: 'timeRatio <= 1.3', connections: CONNECTIONS, timeRatio: timeRatio(result.ratio), ...result })
  })
}

// The same PUTs, each connection replacing a group of its own: no writer waits on another's row
// lock, so the figures read what recording the history costs rather than how long a row is held.
export async function studioPutHistorySpread (): Promise<void> {
  const scenario = 'studio-put-history-spread'
  const spread = (instance: Instance) => async (options: LoadOptions) => await loadEach(instance.ids.map((_, g) => put(instance, g)), options)
  await withInstances(scenario, [{}, { STUDIO_HISTORY_MAX_VERSIONS: '0', AUDIT_ENABLED: 'false' }], async ([recorded, unrecorded]) => {
    const result = await compare(spread(recorded as Instance), spread(unrecorded as Instance), { connections: CONNECTIONS, seconds: 4, rounds: 5 })
    report({ scenario, target: 'timeRatio <= 1.3', connections: CONNECTIONS, groups: CONNECTIONS, timeRatio: timeRatio(result.ratio), ...result })
  }, CONNECTIONS)
}

export async function studioVersionsPage (): Promise<void> {
  const scenario = 'studio-versions-page'
  await withInstances(scenario, [{ STUDIO_HISTORY_MAX_VERSIONS: String(VERSIONS) }], async ([instance]) => {
    const { service, databaseUrl, id } = instance as Instance
    // 10,000 versions of the group, as its changes would have recorded them.
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      await client.query(`INSERT INTO component_group_versions (group_id, version, action, actor, auth_method, name, gbac_read, gbac_write, doc)
        SELECT g.id, v, 'replace', 'bench-designer', 'basic', g.name, g.gbac_read, g.gbac_write, g.doc
        FROM component_groups AS g, generate_series(2, $2::int) AS v WHERE g.id = $1`, [id, VERSIONS])
      await client.query('VACUUM ANALYZE component_group_versions')
    } finally {
      await client.end()
    }
    const get = (url: string) => ({ url, headers: { authorization: designerAuth }, ...(service.child.pid === undefined ? {} : { pid: service.child.pid }) })
    const result = await compare(get(`${service.url}/studio/component-groups/${id}/versions?limit=25`),
      get(`${service.url}/studio/component-groups/${id}`), { connections: CONNECTIONS, seconds: 4, rounds: 5 })
    report({ scenario, target: 'timeRatio <= 3', connections: CONNECTIONS, versions: VERSIONS, timeRatio: timeRatio(result.ratio), ...result })
  })
}
