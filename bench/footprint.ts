// The service's memory at rest: resident set size (RSS) of a started service once /ready
// answers and it has sat idle a moment, with the embedded database after its first start (initdb)
// and after a restart on the same files, against the PostgreSQL-server set-up as the baseline.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { report, serverSchema, startServer } from './measure.js'
import packageJson from '../package.json' with { type: 'json' }

const ADMIN_PASSWORD = 'bench-admin-password'
const SETTLE_MS = 3000

async function rssMiB (pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1])
  return Math.round(kib / 1024)
}

/** RSS (MiB) of the service started on `env`, idle after /ready answered. */
async function idleRss (env: Record<string, string | undefined>): Promise<number> {
  const service = await startServer('service', { ...env, ADMIN_PASSWORD })
  try {
    const ready = await fetch(`${service.url}/ready`)
    if (!ready.ok) throw new Error(`/ready answered ${ready.status}`)
    await sleep(SETTLE_MS)
    return await rssMiB(service.child.pid as number)
  } finally {
    await service.stop()
  }
}

// The environment `npm start` (and the image) gives the service: glibc's MALLOC_MMAP_THRESHOLD_
// (docs/deploying.md, "Memory").
const START_ENV = Object.fromEntries([...packageJson.scripts.start.matchAll(/\b([A-Z_]+)=(\S+)\s/g)].map((m) => [m[1], m[2]]))

/** First start and restart on the embedded database, and the PostgreSQL server's, started with `env`. */
async function footprint (env: Record<string, string | undefined>) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-footprint-'))
  const server = await serverSchema('footprint')
  try {
    const firstStartMiB = await idleRss({ ...env, DATA_DIR: dataDir, DATABASE_URL: '' })
    const restartMiB = await idleRss({ ...env, DATA_DIR: dataDir, DATABASE_URL: '' })
    const baselineMiB = server === undefined ? undefined : await idleRss({ ...env, DATA_DIR: dataDir, DATABASE_URL: server.url })
    return { firstStartMiB, restartMiB, baselineMiB }
  } finally {
    await server?.drop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

export async function idleFootprint (): Promise<void> {
  const started = await footprint(START_ENV)
  // Started as `node dist/server.js` alone, without that environment: what it saves.
  const plain = await footprint(Object.fromEntries(Object.keys(START_ENV).map((name) => [name, undefined])))
  const ratio = (value: number): number | undefined => started.baselineMiB === undefined ? undefined : Number((value / started.baselineMiB).toFixed(2))
  report({
    scenario: 'idle-rss-embedded-vs-postgres-server',
    target: 'embedded <= 300 MiB after a first start and after a restart, started as npm start does',
    startEnv: START_ENV,
    ...started,
    firstStartRatio: ratio(started.firstStartMiB),
    restartRatio: ratio(started.restartMiB),
    withoutStartEnv: plain
  })
}
