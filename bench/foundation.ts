// Foundation scenarios: the cost of auth on the lightest route, and start-up time.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { compare, report, serverSchema, startServer } from './measure.js'

const ADMIN_PASSWORD = 'bench-admin-password'
const auth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')

/**
 * The lightest authenticated route against the lightest Fastify route, once with the embedded
 * database (the default set-up) and once with the PostgreSQL server when one answers (a
 * deployment's set-up). A verified credential is cached, so neither database is queried per request.
 */
export async function maintenanceWithAuth (): Promise<void> {
  const server = await serverSchema('foundation')
  try {
    await maintenanceWithAuthOn('embedded', '')
    if (server !== undefined) await maintenanceWithAuthOn('postgres', server.url)
  } finally {
    await server?.drop()
  }
}

async function maintenanceWithAuthOn (database: 'embedded' | 'postgres', databaseUrl: string): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-foundation-'))
  const service = await startServer('service', { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ADMIN_PASSWORD })
  const route = '/configuration_manager/ismaintenance'
  const candidate = { url: service.url + route, headers: { authorization: auth }, pid: service.child.pid }
  // Against the baseline the target is set against (Fastify's defaults, which include no logger),
  // then against a Fastify that logs as the service does (same level, request ids): the
  // difference left there is what auth, load shedding and metrics cost.
  const baselines = [
    { kind: 'bare-true', line: { scenario: 'ismaintenance-with-auth-vs-bare-fastify', target: 'ratio >= 0.85' } },
    { kind: 'logging-true', line: { scenario: 'ismaintenance-with-auth-vs-fastify-with-logger' } }
  ]
  try {
    for (const { kind, line } of baselines) {
      const baseline = await startServer(kind)
      try {
        const result = await compare(candidate, { url: baseline.url + route, pid: baseline.child.pid }, { connections: 10, seconds: 3, rounds: 5 })
        report({ ...line, database, ...result })
      } finally {
        await baseline.stop()
      }
    }
  } finally {
    await service.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

// Starts the built server and times until /ready answers 200.
async function timeToReady (dataDir: string): Promise<number> {
  const started = performance.now()
  const port = 20000 + Math.floor(Math.random() * 20000)
  const child = spawn(process.execPath, [fileURLToPath(new URL('../server.js', import.meta.url))], {
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(port), LOG_LEVEL: 'warn', ADMIN_PASSWORD },
    stdio: 'ignore'
  })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
      const ok = await fetch(`http://127.0.0.1:${port}/ready`).then((r) => r.ok, () => false)
      if (ok) return Math.round(performance.now() - started)
      await sleep(20)
    }
  } finally {
    child.kill('SIGTERM')
    await once(child, 'exit')
  }
}

export async function startupEmbedded (): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-startup-'))
  try {
    const firstStartMs = await timeToReady(dataDir)
    const restartMs = await timeToReady(dataDir)
    report({ scenario: 'startup-to-ready-embedded', firstStartMs, restartMs, ratio: Number((restartMs / firstStartMs).toFixed(3)) })
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}
