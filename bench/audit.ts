// Audit scenario: 200 restAction calls at once through the relay to the NSO stand-in, on a
// service recording each in the audit trail and on one with AUDIT_ENABLED=false, in alternating
// rounds of the same run; afterwards every call's event is counted in the trail (none lost).
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Agent, request } from 'undici'
import { median, report, serverSchema, startServer, type ChildServer } from './measure.js'

const ADMIN_PASSWORD = 'bench-admin-password'
const auth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')
const CALLS = 200
const ROUNDS = 5
const DOCUMENT = '/restconf/data/tailf-ncs:devices/device=ce0'
const ACCEPT = 'application/yang-data+json'
/** How long the trail may take to show the last events (written within AUDIT_FLUSH_INTERVAL_MS, 100 ms). */
const SETTLE_MS = 10_000

interface Round { wallMs: number, p50: number, p99: number }

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1))] ?? 0

/** CALLS calls at once, each on its own connection; every one must answer 200. */
async function burst (url: string, dispatcher: Agent): Promise<Round> {
  const body = JSON.stringify({ params: { path: DOCUMENT, accept: ACCEPT, method: 'GET' }, body: {} })
  const started = performance.now()
  const times = await Promise.all(Array.from({ length: CALLS }, async () => {
    const begun = performance.now()
    const response = await request(`${url}/orchestrator_manager/restAction/bench`, {
      method: 'POST', dispatcher, headers: { authorization: auth, 'content-type': 'application/json' }, body
    })
    const text = await response.body.text()
    if (response.statusCode !== 200) throw new Error(`restAction: ${response.statusCode} ${text}`)
    return performance.now() - begun
  }))
  const wallMs = performance.now() - started
  times.sort((a, b) => a - b)
  return { wallMs, p50: percentile(times, 50), p99: percentile(times, 99) }
}

/** Relay events in the trail: exact up to `around` + 1000 (a page near `around` has an exact total that far past it). */
async function auditedCalls (url: string, around: number): Promise<number> {
  const response = await request(`${url}/audit?equals=orchestrator.restAction&limit=1&skip=${Math.max(0, around - 1)}`, { headers: { authorization: auth } })
  const page = await response.body.json() as { total: number }
  return page.total
}

async function dropped (url: string): Promise<number> {
  const text = await (await request(`${url}/metrics`)).body.text()
  return Number(/^audit_events_total\{fate="dropped"\} (\d+)/m.exec(text)?.[1] ?? NaN)
}

export async function auditRelay200 (): Promise<void> {
  const dirs = await Promise.all(['on', 'off'].map(async (side) => await mkdtemp(path.join(os.tmpdir(), `bench-audit-${side}-`))))
  // The PostgreSQL server when one answers, a schema per service; else each its embedded database.
  const databases = await Promise.all(['on', 'off'].map(async (side) => await serverSchema(`audit_${side}`)))
  const started: ChildServer[] = []
  const dispatcher = new Agent({ connections: CALLS, pipelining: 0 })
  try {
    const nso = await startServer('nso')
    started.push(nso)
    const services: Record<'on' | 'off', ChildServer> = {} as Record<'on' | 'off', ChildServer>
    for (const [i, side] of (['on', 'off'] as const).entries()) {
      // All the calls of a burst may wait for the adapter's connections (its queue holds 100 by default).
      const service = await startServer('service', {
        DATA_DIR: dirs[i], DATABASE_URL: databases[i]?.url ?? '', ADMIN_PASSWORD, AUDIT_ENABLED: String(side === 'on'), ORCHESTRATOR_QUEUE_MAX: String(CALLS)
      })
      started.push(service)
      services[side] = service
      const created = await fetch(`${service.url}/orchestrator_manager/adapters`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'bench', baseUrl: nso.url, username: 'admin', password: 'admin' })
      })
      if (created.status !== 200) throw new Error(`creating the adapter: ${created.status} ${await created.text()}`)
    }
    // A warm-up burst each (connections, adapter cache, JIT), then alternating rounds.
    await burst(services.on.url, dispatcher)
    await burst(services.off.url, dispatcher)
    const rounds: Record<'on' | 'off', Round[]> = { on: [], off: [] }
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)
      for (const side of order) rounds[side].push(await burst(services[side].url, dispatcher))
    }
    const expected = CALLS * (ROUNDS + 1)
    const deadline = Date.now() + SETTLE_MS
    let recorded = await auditedCalls(services.on.url, expected)
    while (recorded < expected && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      recorded = await auditedCalls(services.on.url, expected)
    }
    const of = (side: 'on' | 'off', key: keyof Round): number => median(rounds[side].map((x) => x[key]))
    const ratio = (key: keyof Round): number => Number((of('on', key) / of('off', key)).toFixed(3))
    const round = (n: number): number => Number(n.toFixed(1))
    report({
      scenario: 'audit-relay-200',
      target: 'none lost (recorded = calls), none blocking (wall-time and latency ratios near 1)',
      database: databases[0] === undefined ? 'embedded' : 'postgres',
      calls: expected,
      recorded,
      lost: expected - recorded,
      dropped: await dropped(services.on.url),
      auditOff: { recorded: await auditedCalls(services.off.url, 0) },
      wallMs: { on: round(of('on', 'wallMs')), off: round(of('off', 'wallMs')), ratio: ratio('wallMs') },
      p50Ms: { on: round(of('on', 'p50')), off: round(of('off', 'p50')), ratio: ratio('p50') },
      p99Ms: { on: round(of('on', 'p99')), off: round(of('off', 'p99')), ratio: ratio('p99') },
      callsPerSecond: { on: round(CALLS * 1000 / of('on', 'wallMs')), off: round(CALLS * 1000 / of('off', 'wallMs')) },
      rounds: ROUNDS,
      loadAverage: os.loadavg().map((l) => Number(l.toFixed(2)))
    })
  } finally {
    await dispatcher.close()
    for (const server of started.reverse()) await server.stop()
    for (const database of databases) await database?.drop()
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  }
}
