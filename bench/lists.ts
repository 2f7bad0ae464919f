// List and import scenarios, against the PostgreSQL server.
// - lists at 100,000 component groups (first page, contains, a reader who sees few groups), each
//   against GET of one group by id by the same user, in alternating rounds: a page should cost
//   what the page holds, at most 5 times a GET (ratio of requests per second >= 0.2).
// - an import of 500 groups of one name where thousands of its suffixed forms exist, against an
//   import of 500 new names, in alternating rounds: at most 2 times as long.
import pg from 'pg'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { compare, median, report, serverSchema, startServer } from './measure.js'

const CONNECTIONS = 8
const GROUPS = 100_000
const TEAMS = 5_000 // each restricted group belongs to one team: 20 groups a team
const ADMIN_PASSWORD = 'bench-admin-password'
const adminAuth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')
// A reader in one team: 20 restricted groups and the 10 public ones of 100,000.
const reader = { username: 'bench-reader', password: 'bench-reader-password', groups: ['team-7'] }
const readerAuth = 'Basic ' + Buffer.from(`${reader.username}:${reader.password}`).toString('base64')
// A reader in a team no group is restricted to: the 10 public groups of 100,000.
const fewReader = { username: 'bench-few-reader', password: 'bench-reader-password', groups: ['team-none'] }
const fewReaderAuth = 'Basic ' + Buffer.from(`${fewReader.username}:${fewReader.password}`).toString('base64')

async function post (url: string, auth: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`)
  return await response.json() as Record<string, unknown>
}

async function withService (scenario: string, fn: (serviceUrl: string, databaseUrl: string) => Promise<void>): Promise<void> {
  const database = await serverSchema('lists')
  if (database === undefined) {
    report({ scenario, skipped: 'PostgreSQL server not reachable at BENCH_DATABASE_URL' })
    return
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-lists-'))
  try {
    const service = await startServer('service', { DATABASE_URL: database.url, DATABASE_POOL_SIZE: String(CONNECTIONS), DATA_DIR: dataDir, ADMIN_PASSWORD })
    try {
      await fn(service.url, database.url)
    } finally {
      await service.stop()
    }
  } finally {
    await database.drop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

async function sql (databaseUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try { await client.query(text) } finally { await client.end() }
}

export async function listsAtScale (): Promise<void> {
  await withService('lists-100k', async (serviceUrl, databaseUrl) => {
    await post(`${serviceUrl}/users`, adminAuth, reader)
    await post(`${serviceUrl}/users`, adminAuth, fewReader)
    const visible = await post(`${serviceUrl}/studio/component-groups`, adminAuth, { componentGroup: { name: 'Bench visible', gbacRead: ['team-7'], members: [] } }) as { created: { _id: string } }
    // 100,000 groups: 10 public, the rest restricted to one team each; written straight to the table.
    await sql(databaseUrl, `INSERT INTO component_groups (id, name, gbac_read, doc)
      SELECT lpad(to_hex(g), 24, '0'), 'Group ' || g,
        CASE WHEN g % 10000 = 0 THEN '{}'::text[] ELSE ARRAY['team-' || (g % ${TEAMS})] END,
        '{"description":"A group of the benchmark","members":[{"path":["Network","Core"],"type":"folder"}],"meta":{}}'
      FROM generate_series(1, ${GROUPS}) AS g`)
    await sql(databaseUrl, 'VACUUM ANALYZE component_groups')
    // Group 10000 is public: the reader who sees 10 groups reads it by id.
    const publicId = (10_000).toString(16).padStart(24, '0')
    const get = (auth: string) => ({ url: `${serviceUrl}/studio/component-groups/${auth === fewReaderAuth ? publicId : visible.created._id}`, headers: { authorization: auth } })
    const scenarios: Array<[string, string, string]> = [
      ['list-first-page-vs-get', '', adminAuth],
      // A distinctive part of a name, and one that shares trigrams with every name ("Group ..."):
      // the trigram index reads the posting lists of every trigram of the text.
      ['list-contains-vs-get', 'contains=4242', adminAuth],
      ['list-contains-common-trigrams-vs-get', 'contains=oup%204242', adminAuth],
      ['list-reader-few-groups-vs-get', '', readerAuth],
      ['list-reader-sees-10-vs-get', '', fewReaderAuth]
    ]
    for (const [scenario, query, auth] of scenarios) {
      const result = await compare(
        { url: `${serviceUrl}/studio/component-groups?${query}`, headers: { authorization: auth } },
        get(auth),
        { connections: CONNECTIONS, seconds: 2, rounds: 3 })
      report({ scenario, groups: GROUPS, target: 'ratio >= 0.2 (a page costs at most 5 GETs)', connections: CONNECTIONS, ...result })
    }
  })
}

async function timedImport (serviceUrl: string, names: string[]): Promise<number> {
  const started = performance.now()
  await post(`${serviceUrl}/studio/component-groups/import`, adminAuth, { componentGroups: names.map((name) => ({ name, gbacRead: [], members: [] })) })
  return performance.now() - started
}

export async function importColliding (): Promise<void> {
  const scenario = 'import-500-colliding-vs-500-unique'
  await withService(scenario, async (serviceUrl) => {
    const size = 500
    // 2,500 forms of the name exist before the first measured import.
    for (let i = 0; i < 5; i++) await timedImport(serviceUrl, Array.from({ length: size }, () => 'Collide'))
    let unique = 0
    const fresh = () => Array.from({ length: size }, () => `Unique ${unique++}`)
    await timedImport(serviceUrl, fresh()) // warm-up
    const colliding: number[] = []
    const baseline: number[] = []
    for (let round = 0; round < 5; round++) {
      if (round % 2 === 0) {
        colliding.push(await timedImport(serviceUrl, Array.from({ length: size }, () => 'Collide')))
        baseline.push(await timedImport(serviceUrl, fresh()))
      } else {
        baseline.push(await timedImport(serviceUrl, fresh()))
        colliding.push(await timedImport(serviceUrl, Array.from({ length: size }, () => 'Collide')))
      }
    }
    const ratio = median(colliding.map((c, i) => c / (baseline[i] as number)))
    report({
      scenario,
      target: 'timeRatio <= 2',
      existingForms: 2500,
      collidingMs: Math.round(median(colliding)),
      uniqueMs: Math.round(median(baseline)),
      timeRatio: Number(ratio.toFixed(3))
    })
  })
}
