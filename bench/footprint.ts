// The service's memory at rest: resident set size (RSS) of a started service once /ready
// answers and it has sat idle a moment, with the embedded database after its first start (initdb)
// and after a restart on the same files, against the PostgreSQL-server set-up as the baseline.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { report, serverSchema, startServer } from './measure.js'

const ADMIN_PASSWORD = 'bench-admin-password'
const SETTLE_MS = 3000

async function rssMiB (pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1])
  return Math.round(kib / 1024)
}

/** RSS (MiB) of the service started on `env`, idle after /ready answered. */
async function idleRss (env: Record<string, string>): Promise<number> {
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

export async function idleFootprint (): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-footprint-'))
  const server = await serverSchema('footprint')
  try {
    const firstStartMiB = await idleRss({ DATA_DIR: dataDir, DATABASE_URL: '' })
    const restartMiB = await idleRss({ DATA_DIR: dataDir, DATABASE_URL: '' })
    const baselineMiB = server === undefined ? undefined : await idleRss({ DATA_DIR: dataDir, DATABASE_URL: server.url })
    const ratio = (value: number): number | undefined => baselineMiB === undefined ? undefined : Number((value / baselineMiB).toFixed(2))
    report({
      scenario: 'idle-rss-embedded-vs-postgres-server',
      target: 'embedded <= 300 MiB after a first start and after a restart',
      firstStartMiB,
      restartMiB,
      baselineMiB,
      firstStartRatio: ratio(firstStartMiB),
      restartRatio: ratio(restartMiB)
    })
  } finally {
    await server?.drop()
    await rm(dataDir, { recursive: true, force: true })
  }
}
