// Foundation scenarios: the cost of auth on the lightest route, and start-up time.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { pairedRounds, report, serverSchema, startServer, summarise, type Rounds } from './measure.js'

const ADMIN_PASSWORD = 'bench-admin-password'
const auth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')

/**
 * The lightest authenticated route against the same route on a Fastify that logs as the service
 * does (and, for information, on a bare Fastify), once with the embedded database (the default
 * set-up) and once with the PostgreSQL server when one answers (a deployment's set-up). A verified
 * credential is cached, so neither database is queried per request.
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

// The auth path's ratio is read from many short rounds in several pairs of processes: pairs of
// rounds of one second vary widely on a shared two-core machine (0.7-1.2 here), and so does a
// process's speed from one start to the next, which rounds within one process do not average out.
const PROCESSES = 3
const ROUNDS = { connections: 10, seconds: 1, rounds: 8, warmupRounds: 2 }

async function maintenanceWithAuthOn (database: 'embedded' | 'postgres', databaseUrl: string): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-foundation-'))
  const route = '/configuration_manager/ismaintenance'
  // The target is set against a Fastify that logs as the service does (pino at the same level,
  // request ids, the same redaction): the difference is what credentials, load shedding and
  // metrics cost, the part of a request this service decides. The bare route (Fastify's defaults,
  // no logger) is reported for information: the logger's own cost depends on LOG_LEVEL.
  const baselines = [
    { kind: 'logging-true', line: { scenario: 'ismaintenance-with-auth-vs-fastify-with-logger', target: 'ratio >= 0.85' } },
    { kind: 'bare-true', line: { scenario: 'ismaintenance-with-auth-vs-bare-fastify', note: 'for information: the baseline has no logger' } }
  ].map((baseline) => ({ ...baseline, rounds: { candidate: [], baseline: [] } as Rounds }))
  try {
    for (let p = 0; p < PROCESSES; p++) {
      // The same data directory or schema each time: a restart, as a deployment's would be.
      const service = await startServer('service', { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ADMIN_PASSWORD })
      const candidate = { url: service.url + route, headers: { authorization: auth }, pid: service.child.pid }
      try {
        for (const { kind, rounds } of baselines) {
          const baseline = await startServer(kind)
          try {
            const measured = await pairedRounds(candidate, { url: baseline.url + route, pid: baseline.child.pid }, ROUNDS)
            rounds.candidate.push(...measured.candidate)
            rounds.baseline.push(...measured.baseline)
          } finally {
            await baseline.stop()
          }
        }
      } finally {
        await service.stop()
      }
    }
    for (const { line, rounds } of baselines) {
      report({ ...line, database, processes: PROCESSES, rounds: rounds.candidate.length, ...summarise(rounds) })
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

/** The steps of the cost-by-part scenario: the service built up to each block of app.ts (bench/serve.ts). */
export const SERVICE_PART_NAMES = ['core', 'database', 'auth', 'metrics', 'audit', 'areas'] as const
export type ServicePart = typeof SERVICE_PART_NAMES[number]
/** The route a partial service answers, without credentials. */
export const PART_ROUTE = '/part/configuration_manager/ismaintenance'

const PART_PROCESSES = 2
const PART_ROUNDS = { connections: 10, seconds: 1, rounds: 6, warmupRounds: 2 }

/**
 * Where the auth path's cost beyond the logging baseline goes: the same answer on the service
 * built up to each block of app.ts (core: the server options, error handler, response headers,
 * input checks and load shedding; then the database, auth, metrics, audit and the areas with
 * every route), without credentials, and last the whole service's route with cached Basic
 * credentials. Each step against the logging baseline in the same pairs of rounds; the drop of
 * `cpuRatio` from one step to the next is what that step adds to every request. On the
 * PostgreSQL server when one answers (no database thread in the process), else embedded.
 */
export async function maintenanceCostByPart (): Promise<void> {
  const server = await serverSchema('parts')
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-parts-'))
  const env = { DATA_DIR: dataDir, DATABASE_URL: server?.url ?? '', ADMIN_PASSWORD }
  const steps = [
    ...SERVICE_PART_NAMES.map((part) => ({ part, kind: 'service-part', env: { ...env, SERVICE_PART: part }, route: PART_ROUTE, headers: undefined })),
    { part: 'service with credentials', kind: 'service', env, route: '/configuration_manager/ismaintenance', headers: { authorization: auth } }
  ].map((step) => ({ ...step, rounds: { candidate: [], baseline: [] } as Rounds }))
  try {
    for (let p = 0; p < PART_PROCESSES; p++) {
      for (const step of steps) {
        const service = await startServer(step.kind, step.env)
        const baseline = await startServer('logging-true')
        try {
          const measured = await pairedRounds(
            { url: service.url + step.route, headers: step.headers, pid: service.child.pid },
            { url: baseline.url + '/configuration_manager/ismaintenance', pid: baseline.child.pid }, PART_ROUNDS)
          step.rounds.candidate.push(...measured.candidate)
          step.rounds.baseline.push(...measured.baseline)
        } finally {
          await Promise.all([service.stop(), baseline.stop()])
        }
      }
    }
    for (const { part, rounds } of steps) {
      const { ratio, cpuRatio, service, baseline } = summarise(rounds)
      report({
        scenario: 'ismaintenance-cost-by-part',
        part,
        note: 'for information: each step against a Fastify that logs alike',
        database: server === undefined ? 'embedded' : 'postgres',
        processes: PART_PROCESSES,
        rounds: rounds.candidate.length,
        ratio,
        cpuRatio,
        cpuUsPerRequest: { service: service.cpuUsPerRequest, baseline: baseline.cpuUsPerRequest },
        non2xx: service.non2xx
      })
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true })
    await server?.drop()
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
