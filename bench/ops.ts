// Operations scenarios: what the reverse proxy costs, and how fast the service serves again after
// the database comes back or its connections are killed.
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { nginxInstalled, startNginx } from '../test/fixtures/nginx.js'
import { startTcpProxy } from '../test/fixtures/tcp-proxy.js'
import { compare, report, startServer } from './measure.js'

const ADMIN_PASSWORD = 'bench-admin-password'
const auth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export async function behindNginx (): Promise<void> {
  const scenario = 'ismaintenance-through-nginx-vs-direct'
  if (!nginxInstalled()) {
    report({ scenario, skipped: 'nginx is not installed (/usr/sbin/nginx)' })
    return
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-ops-'))
  const service = await startServer('service', { DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_PASSWORD, TRUST_PROXY: 'loopback' })
  const upstream = new URL(service.url)
  const nginx = await startNginx((port) => `
    upstream netauto { server 127.0.0.1:${upstream.port}; keepalive 16; }
    server {
      listen 127.0.0.1:${port};
      access_log off;
      location /netauto/ {
        proxy_pass http://netauto/;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Forwarded-Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Prefix /netauto;
      }
    }`)
  try {
    const route = '/configuration_manager/ismaintenance'
    const result = await compare(
      { url: `${nginx.url}/netauto${route}`, headers: { authorization: auth } },
      { url: service.url + route, headers: { authorization: auth } },
      { connections: 10, seconds: 3 })
    // On two shared cores nginx takes CPU from the service itself; a separate host would not.
    report({ scenario, target: 'ratio >= 0.5 on this 2-core machine', ...result })
  } finally {
    await nginx.stop()
    await service.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

/** Milliseconds until `GET url` answers 200, polling every 10 ms (at most 30 s). */
async function untilOk (url: string): Promise<number> {
  const started = performance.now()
  while (performance.now() - started < 30_000) {
    const ok = await fetch(url, { headers: { authorization: auth } }).then(async (r) => { await r.arrayBuffer(); return r.ok }, () => false)
    if (ok) return Math.round(performance.now() - started)
    await sleep(10)
  }
  throw new Error(`${url} did not recover within 30 s`)
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

export async function outageRecovery (): Promise<void> {
  const scenario = 'database-outage-recovery'
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  try {
    await admin.connect()
  } catch (err) {
    report({ scenario, skipped: `no PostgreSQL server at BENCH_DATABASE_URL: ${(err as Error).message}` })
    return
  }
  const schema = `bench_ops_${randomBytes(4).toString('hex')}`
  const applicationName = `netauto_bench_${randomBytes(4).toString('hex')}`
  await admin.query(`CREATE SCHEMA ${schema}`)
  const direct = new URL(DATABASE_URL)
  const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port === '' ? 5432 : direct.port) })
  const url = new URL(direct)
  url.port = String(proxy.port)
  url.searchParams.set('options', `-c search_path=${schema}`)
  url.searchParams.set('application_name', applicationName)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-ops-'))
  const service = await startServer('service', { DATA_DIR: dataDir, DATABASE_URL: url.toString(), ADMIN_PASSWORD })
  const users = `${service.url}/users`
  try {
    await untilOk(users)
    const afterRestore: number[] = []
    const afterTerminate: number[] = []
    for (let i = 0; i < 5; i++) {
      await proxy.cut()
      await fetch(users, { headers: { authorization: auth } }).then(async (r) => await r.arrayBuffer(), () => undefined)
      await proxy.restore()
      afterRestore.push(await untilOk(users))
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [applicationName])
      afterTerminate.push(await untilOk(users))
    }
    report({
      scenario,
      target: 'serving again within 5000 ms',
      msAfterRestore: median(afterRestore),
      msAfterTerminate: median(afterTerminate),
      runs: { afterRestore, afterTerminate }
    })
  } finally {
    await service.stop()
    await proxy.close()
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await admin.end()
    await rm(dataDir, { recursive: true, force: true })
  }
}
