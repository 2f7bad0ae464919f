// Studio scenarios, against the PostgreSQL server: replacing and reading a component group
// through the service, versus the very same SQL statement with the same parameters issued
// straight through a pg Pool (pgLoad), in alternating rounds of the same length.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { GET_SQL, REPLACE_SQL, getParams, replaceParams, toFields } from '../plugins/studio/component-groups-repository.js'
import { DEFAULT_HISTORY, historyParams } from '../lib/studio/history.js'
import type { ComponentGroupUpdate } from '../schemas/component-groups.js'
import { compare, pgLoad, report, serverSchema, startServer } from './measure.js'

const CONNECTIONS = 16
const ADMIN_PASSWORD = 'bench-admin-password'
const adminAuth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')
// The caller is a designer in a group the document is restricted to, so every statement
// evaluates the group rules (an admin would skip them).
const designer = { username: 'bench-designer', password: 'bench-designer-password', roles: ['designer'], groups: ['netops'] }
const designerAuth = 'Basic ' + Buffer.from(`${designer.username}:${designer.password}`).toString('base64')

// A group of a realistic size: 20 members of both kinds, a little metadata.
const update: ComponentGroupUpdate = {
  name: 'Bench core routers',
  description: 'Core routers of the benchmark network',
  members: Array.from({ length: 20 }, (_, i) => i % 2 === 0
    ? { path: ['Network', 'Core', `Site ${i}`], type: 'folder' as const }
    : { path: `/Network/Core/Site ${i}/Backup`, type: 'component' as const, sourceCollection: 'automations', ref: `5f1c${String(i).padStart(20, '0')}` }),
  gbacRead: ['netops'],
  gbacWrite: ['netops'],
  meta: { owner: 'netops', ticket: 'NET-1234', reviewed: true }
}

interface Fixture { serviceUrl: string, databaseUrl: string, id: string }

async function post (url: string, auth: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`)
  return await response.json() as Record<string, unknown>
}

// The service on a schema of its own, with one designer and one component group; all dropped after.
async function withFixture (scenario: string, fn: (fixture: Fixture) => Promise<void>): Promise<void> {
  const database = await serverSchema('studio')
  if (database === undefined) {
    report({ scenario, skipped: 'PostgreSQL server not reachable at BENCH_DATABASE_URL' })
    return
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-studio-'))
  try {
    const service = await startServer('service', {
      DATABASE_URL: database.url, DATABASE_POOL_SIZE: String(CONNECTIONS), DATA_DIR: dataDir, ADMIN_PASSWORD
    })
    try {
      await post(`${service.url}/users`, adminAuth, designer)
      const created = await post(`${service.url}/studio/component-groups`, designerAuth, { componentGroup: update }) as { created: { _id: string } }
      await fn({ serviceUrl: service.url, databaseUrl: database.url, id: created.created._id })
    } finally {
      await service.stop()
    }
  } finally {
    await database.drop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

export async function studioPut (): Promise<void> {
  const scenario = 'studio-put-vs-pg-update'
  await withFixture(scenario, async ({ serviceUrl, databaseUrl, id }) => {
    const result = await compare(
      {
        url: `${serviceUrl}/studio/component-groups/${id}`,
        method: 'PUT',
        headers: { authorization: designerAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ update })
      },
      pgLoad({
        url: databaseUrl,
        sql: REPLACE_SQL,
        params: replaceParams(designer, id, toFields(update), undefined,
          historyParams('replace', { username: designer.username, method: 'basic' }, DEFAULT_HISTORY))
      }),
      { connections: CONNECTIONS, seconds: 4, rounds: 5 })
    report({ scenario, target: 'ratio >= 0.9', connections: CONNECTIONS, ...result })
  })
}

export async function studioGet (): Promise<void> {
  const scenario = 'studio-get-vs-pg-select'
  await withFixture(scenario, async ({ serviceUrl, databaseUrl, id }) => {
    const result = await compare(
      { url: `${serviceUrl}/studio/component-groups/${id}`, headers: { authorization: designerAuth } },
      pgLoad({ url: databaseUrl, sql: GET_SQL, params: getParams(designer, id) }),
      { connections: CONNECTIONS, seconds: 4, rounds: 5 })
    report({ scenario, target: 'ratio >= 0.6', connections: CONNECTIONS, ...result })
  })
}
