// What every hostile-input test checks after its requests: the service still answers (readiness
// and an ordinary read), and no row of any table changed.
import type { Test } from 'tap'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { adminAuth, type TestApp } from '../helper.js'

/** A digest of every row of every table of the service but its records of requests, to prove nothing changed. */
export async function databaseDigest (app: TestApp): Promise<string> {
  const { rows: tables } = await app.db.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1")
  // Refusals are recorded on purpose: in the audit trail, and (failed logins) in the shared counts.
  const records = new Set(['audit_events', 'login_failures'])
  const parts: string[] = []
  for (const { name } of tables.filter((table) => !records.has(table.name))) {
    const { rows } = await app.db.query<{ d: string | null }>(
      `SELECT md5(string_agg(row_to_json(x)::text, ',' ORDER BY row_to_json(x)::text)) AS d FROM "${name}" x`)
    parts.push(`${name}:${rows[0]?.d ?? 'empty'}`)
  }
  return parts.join(' ')
}

/** How long one request may take before the test calls it a hang (a deadline, not a speed target). */
export const HANG_DEADLINE_MS = 60_000

/** `app.inject` under a deadline: a request that never answers fails the test instead of stalling it. */
export async function injectWithin (app: TestApp, options: InjectOptions): Promise<LightMyRequestResponse> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`no answer within ${HANG_DEADLINE_MS} ms`)) }, HANG_DEADLINE_MS)
  })
  try {
    return await Promise.race([app.inject(options), deadline])
  } finally {
    clearTimeout(timer)
  }
}

/** Readiness and an ordinary authenticated read still answer 200. */
export async function assertStillServing (t: Test, app: TestApp): Promise<void> {
  t.equal((await injectWithin(app, { url: '/ready' })).statusCode, 200, '/ready answers 200')
  const read = await injectWithin(app, { url: '/studio/component-groups', headers: { authorization: adminAuth } })
  t.equal(read.statusCode, 200, 'an ordinary read answers 200')
}

/** A component group body with every required field. */
export const GROUP = { name: 'hostile', members: [] as unknown[], gbacRead: [] as string[] }

/**
 * Every free-form JSON field the service accepts, each as the request that carries `value` (JSON
 * text) there and the field's name in a 400 message. `id` is an existing component group.
 */
export function freeFormFields (id: string): Array<{ field: string, method: 'POST' | 'PUT', url: string, body: (value: string) => string }> {
  const group = (value: string): string => `{"name":"hostile-x","members":[],"gbacRead":[],"meta":${value}}`
  return [
    { field: 'body/componentGroup/meta', method: 'POST', url: '/studio/component-groups', body: (v) => `{"componentGroup":${group(v)}}` },
    { field: 'body/update/meta', method: 'PUT', url: `/studio/component-groups/${id}`, body: (v) => `{"update":${group(v)}}` },
    { field: 'body/componentGroups/1/meta', method: 'POST', url: '/studio/component-groups/import', body: (v) => `{"componentGroups":[${group('{}')},${group(v)}]}` },
    { field: 'body/project', method: 'POST', url: '/git/GitHub/repos/netops%2Fautomation/branches/main/projects/p.json', body: (v) => `{"project":${v}}` },
    { field: 'body/project', method: 'PUT', url: '/git/GitHub/repos/netops%2Fautomation/branches/main/projects/p.json', body: (v) => `{"project":${v}}` },
    {
      field: 'body/body',
      method: 'POST',
      url: '/orchestrator_manager/restAction/nso',
      body: (v) => `{"params":{"path":"/restconf/data","accept":"application/yang-data+json"},"body":${v}}`
    }
  ]
}

/** Creates a component group through the API and returns its id. */
export async function createGroup (app: TestApp, name = GROUP.name): Promise<string> {
  const response = await injectWithin(app, { method: 'POST', url: '/studio/component-groups', headers: { authorization: adminAuth }, payload: { componentGroup: { ...GROUP, name } } })
  if (response.statusCode !== 200) throw new Error(`creating a group: ${response.statusCode} ${response.body}`)
  return (response.json() as { created: { _id: string } }).created._id
}

/** Whether this runtime's JSON can write a value nested `depth` deep (V8 of Node.js 26 can: no recursion). */
export function writesNested (depth: number): boolean {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = { a: value }
  try {
    JSON.stringify(value)
    return true
  } catch {
    return false
  }
}
