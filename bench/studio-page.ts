// Opening the studio page's list: the calls the page makes for its first page (web/src/list.tsx),
// on a service holding 100,000 component groups against the same service holding 10, in
// alternating rounds, on the PostgreSQL server and on the embedded database. One "open" is the
// list call (limit 20, skip 0, sorted by name; or with the Search field's `contains`) followed by
// the page's last-change reads, one `versions?limit=1` per row shown, all at once over at most 6
// connections, as a browser sends them. Rows are written straight to the tables with
// generate_series before the service starts.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Agent, fetch } from 'undici'
import { migrate, openDatabase } from '../plugins/database/index.js'
import { loadConfig } from '../plugins/core/config.js'
import { compare, median, report, serverSchema, startServer, type LoadFigures, type Runner } from './measure.js'

const MANY = 100_000
const FEW = 10
const PAGE_SIZE = 20 // the page's own
const USERS = 2 // pages opened at once
const ADMIN_PASSWORD = 'bench-admin-password'
const adminAuth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')

interface Database { kind: 'postgres' | 'embedded', env: Record<string, string>, drop: () => Promise<void> }

// The few groups are Group 42420 to 42429, names the many hold too: the search "4242" finds all 10
// of them, and 11 of the many (4242, 42420-42429); the first page shows 10 rows against 20.
async function seed (env: Record<string, string>, from: number, to: number): Promise<void> {
  // Seeding 100,000 rows in one statement takes longer than a request's deadline on a busy machine.
  const db = await openDatabase(loadConfig({ ...env, DATABASE_QUERY_TIMEOUT_MS: '600000' }))
  try {
    await migrate(db)
    await db.query(`INSERT INTO component_groups (id, name, doc)
      SELECT lpad(to_hex(g), 24, '0'), 'Group ' || g,
        '{"description":"A group of the benchmark","members":[{"path":["Network","Core"],"type":"folder"}],"meta":{}}'
      FROM generate_series($1::int, $2::int) AS g`, [from, to])
    await db.query(`INSERT INTO component_group_versions (group_id, version, action, actor, auth_method, name, gbac_read, gbac_write, doc)
      SELECT id, 1, 'create', 'admin', 'basic', name, gbac_read, gbac_write, doc FROM component_groups`)
    await db.exec('VACUUM ANALYZE')
  } finally {
    await db.close()
  }
}

async function databases (): Promise<Database[]> {
  const found: Database[] = []
  for (const size of ['many', 'few']) {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), `bench-page-${size}-`))
    found.push({ kind: 'embedded', env: { DATA_DIR: dataDir }, drop: async () => { await rm(dataDir, { recursive: true, force: true }) } })
  }
  const schemas = [await serverSchema('page_many'), await serverSchema('page_few')]
  for (const schema of schemas) {
    if (schema === undefined) continue
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-page-'))
    found.push({
      kind: 'postgres',
      env: { DATABASE_URL: schema.url, DATA_DIR: dataDir },
      drop: async () => { await schema.drop(); await rm(dataDir, { recursive: true, force: true }) }
    })
  }
  return found
}

/** Opens the list as the page does, `USERS` at a time, for `seconds`: opens per second and their times. */
function opener (serviceUrl: string, query: string): { runner: Runner, rowsShown: () => number, listMs: () => number, close: () => Promise<void> } {
  const dispatcher = new Agent({ connections: 6 * USERS })
  const headers = { authorization: adminAuth, 'x-requested-with': 'netauto-studio' }
  let rows = 0
  const lists: number[] = [] // the list call's own time, of every open
  const get = async (url: string): Promise<{ items: Array<{ _id: string }> }> => {
    const response = await fetch(url, { headers, dispatcher })
    if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`)
    return await response.json() as { items: Array<{ _id: string }> }
  }
  const open = async (): Promise<void> => {
    const started = performance.now()
    const page = await get(`${serviceUrl}/studio/component-groups?limit=${PAGE_SIZE}&skip=0&sort=name&order=1${query}`)
    lists.push(performance.now() - started)
    rows = page.items.length
    await Promise.all(page.items.map(async (item) => await get(`${serviceUrl}/studio/component-groups/${item._id}/versions?limit=1&skip=0`)))
  }
  const runner: Runner = async ({ seconds }): Promise<LoadFigures> => {
    const times: number[] = []
    let errors = 0
    const end = performance.now() + seconds * 1000
    const started = performance.now()
    await Promise.all(Array.from({ length: USERS }, async () => {
      while (performance.now() < end) {
        const at = performance.now()
        try { await open(); times.push(performance.now() - at) } catch { errors++ }
      }
    }))
    const sorted = times.sort((a, b) => a - b)
    return {
      rps: times.length / ((performance.now() - started) / 1000),
      p50: median(sorted),
      p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
      errors,
      non2xx: 0
    }
  }
  return { runner, rowsShown: () => rows, listMs: () => Number(median(lists).toFixed(1)), close: async () => { await dispatcher.close() } }
}

export async function studioPageList (): Promise<void> {
  const all = await databases()
  try {
    for (const kind of ['postgres', 'embedded'] as const) {
      const [many, few] = all.filter((d) => d.kind === kind)
      if (many === undefined || few === undefined) {
        report({ scenario: `studio-page-list-100k-vs-10-${kind}`, skipped: 'PostgreSQL server not reachable at BENCH_DATABASE_URL' })
        continue
      }
      const seeding = performance.now()
      await seed(many.env, 1, MANY)
      await seed(few.env, 42420, 42420 + FEW - 1)
      const seedMs = Math.round(performance.now() - seeding)
      const services = [
        await startServer('service', { ...many.env, ADMIN_PASSWORD }),
        await startServer('service', { ...few.env, ADMIN_PASSWORD })
      ]
      try {
        const [manyService, fewService] = services as [typeof services[0], typeof services[0]]
        for (const [what, query] of [['first-page', ''], ['search', '&contains=4242']] as const) {
          const a = opener(manyService.url, query)
          const b = opener(fewService.url, query)
          try {
            const result = await compare(a.runner, b.runner, { connections: USERS, seconds: 3, rounds: 5 })
            report({
              scenario: `studio-page-list-100k-vs-10-${kind}-${what}`,
              target: 'ratio >= 0.5 (opens per second: 20 rows among 100,000 cost at most twice 10 rows among 10)',
              groups: { service: MANY, baseline: FEW },
              rowsShown: { service: a.rowsShown(), baseline: b.rowsShown() },
              requestsPerOpen: { service: 1 + a.rowsShown(), baseline: 1 + b.rowsShown() },
              // The list call alone, median over every open (warm-up included): what the rows' number changes.
              listP50Ms: { service: a.listMs(), baseline: b.listMs() },
              usersAtOnce: USERS,
              seedMs,
              ...result,
              service: { opensPerSecond: result.service.rps, p50Ms: Number(result.service.p50.toFixed(1)), p99Ms: Number(result.service.p99.toFixed(1)), errors: result.service.errors },
              baseline: { opensPerSecond: result.baseline.rps, p50Ms: Number(result.baseline.p50.toFixed(1)), p99Ms: Number(result.baseline.p99.toFixed(1)), errors: result.baseline.errors }
            })
          } finally {
            await a.close()
            await b.close()
          }
        }
      } finally {
        for (const service of services) await service.stop()
      }
    }
  } finally {
    for (const database of all) await database.drop()
  }
}
