// Orchestrator scenario: restQuery through the service against a plain @fastify/reply-from proxy
// relaying the same GET to the same NSO stand-in (its own process), same connections and duration.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { compare, report, serverSchema, startServer, type ChildServer } from './measure.js'

const ADMIN_PASSWORD = 'bench-admin-password'
const auth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')
// The stand-in's default credentials.
const NSO_AUTH = 'Basic ' + Buffer.from('admin:admin').toString('base64')
const CONNECTIONS = 10
const DOCUMENT = '/restconf/data/tailf-ncs:devices/device=ce0'
const ACCEPT = 'application/yang-data+json'

export async function restQueryVsReplyFrom (): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-orchestrator-'))
  // The PostgreSQL server when one answers: the embedded database's first start (initdb in WASM)
  // can exceed the plugin start-up limit on a loaded machine. The relayed calls never touch the
  // database either way (adapter rows and credentials are cached).
  const database = await serverSchema('orchestrator')
  // Whatever started is stopped, also when a later server fails to start.
  const started: ChildServer[] = []
  const start = async (kind: string, env?: Record<string, string>): Promise<ChildServer> => {
    const server = await startServer(kind, env)
    started.push(server)
    return server
  }
  try {
    const nso = await start('nso')
    const service = await start('service', {
      DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', ADMIN_PASSWORD, ORCHESTRATOR_POOL_CONNECTIONS: String(CONNECTIONS)
    })
    const proxy = await start('reply-from', { UPSTREAM_URL: nso.url, UPSTREAM_AUTHORIZATION: NSO_AUTH, UPSTREAM_CONNECTIONS: String(CONNECTIONS) })
    const created = await fetch(`${service.url}/orchestrator_manager/adapters`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'bench', baseUrl: nso.url, username: 'admin', password: 'admin' })
    })
    if (created.status !== 200) throw new Error(`creating the adapter: ${created.status} ${await created.text()}`)

    const candidate = {
      url: `${service.url}/orchestrator_manager/restQuery/bench`,
      method: 'POST' as const,
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ params: { path: DOCUMENT, accept: ACCEPT } }),
      pid: service.child.pid
    }
    const baseline = { url: proxy.url + DOCUMENT, headers: { accept: ACCEPT }, pid: proxy.child.pid }
    // Both must relay the same document before their speed means anything.
    const [viaService, viaProxy] = await Promise.all([
      fetch(candidate.url, candidate).then(async (r) => `${r.status} ${await r.text()}`),
      fetch(baseline.url, baseline).then(async (r) => `${r.status} ${await r.text()}`)
    ])
    if (viaService !== viaProxy || !viaService.startsWith('200 ')) throw new Error(`different answers: ${viaService} / ${viaProxy}`)

    const result = await compare(candidate, baseline, { connections: CONNECTIONS, seconds: 3, rounds: 5 })
    report({
      scenario: 'orchestrator-restquery-vs-reply-from',
      target: 'ratio >= 0.9, p99Ratio <= 1.2',
      database: database === undefined ? 'embedded' : 'postgres',
      bytes: viaService.length - 4,
      ...result
    })
  } finally {
    for (const server of started.reverse()) await server.stop()
    await database?.drop()
    await rm(dataDir, { recursive: true, force: true })
  }
}
