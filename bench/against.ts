// `npm run bench -- --against <commit>`: the per-request scenarios (the lightest route with Basic
// and with a Bearer token, restQuery, a studio GET and PUT) run against this build and against a
// build of an earlier commit in the same run, in alternating rounds, so that a regression shows
// when it is made. One JSON line each: `ratio` is this build's requests per second over the
// other's, `cpuRatio` the other's CPU time per request over this one's (1 = the same cost).
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises'
import { createServer } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { compare, profileArgs, report, serverSchema, startServer, type Target } from './measure.js'

const run = promisify(execFile)
const ADMIN_PASSWORD = 'bench-admin-password'
const adminAuth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')
const designer = { username: 'bench-designer', password: 'bench-designer-password', roles: ['designer'], groups: ['netops'] }
const designerAuth = 'Basic ' + Buffer.from(`${designer.username}:${designer.password}`).toString('base64')
const group = { name: 'Bench core routers', description: 'Core routers', members: [{ path: ['Network', 'Core'], type: 'folder' }], gbacRead: ['netops'], gbacWrite: ['netops'], meta: { owner: 'netops' } }
const NSO_DOCUMENT = '/restconf/data/tailf-ncs:devices/device=ce0'
const ROUNDS = { connections: 10, seconds: 2, rounds: 6, warmupRounds: 1 }
// Installing and building a commit may take minutes on a busy machine; never forever.
const BUILD_DEADLINE_MS = 15 * 60_000
const START_DEADLINE_MS = 180_000

// The checkout this bench was built from: dist/bench/ is two levels below it.
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

interface Build { commit: string, dir: string, remove: () => Promise<void> }

/**
 * The source of `commit` (git archive: no worktree of the repository is touched) in a temporary
 * directory, built with its own `npm run build`. Its dependencies are this checkout's when the
 * lockfiles are equal, else installed with `npm ci`.
 */
async function buildCommit (commit: string): Promise<Build> {
  const { stdout } = await run('git', ['rev-parse', '--verify', `${commit}^{commit}`], { cwd: ROOT })
  const sha = stdout.trim()
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-against-'))
  const remove = async (): Promise<void> => { await rm(dir, { recursive: true, force: true }) }
  try {
    const archive = path.join(dir, 'source.tar')
    await run('git', ['archive', '--format=tar', '-o', archive, sha], { cwd: ROOT })
    await run('tar', ['-xf', archive, '-C', dir])
    await rm(archive)
    const lockfile = async (root: string) => await readFile(path.join(root, 'package-lock.json'), 'utf8').catch(() => undefined)
    const ours = await lockfile(ROOT)
    if (ours !== undefined && ours === await lockfile(dir)) await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
    else await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, timeout: BUILD_DEADLINE_MS, maxBuffer: 64 * 1024 * 1024 })
    await run('npm', ['run', 'build'], { cwd: dir, timeout: BUILD_DEADLINE_MS, maxBuffer: 64 * 1024 * 1024 })
    return { commit: sha, dir, remove }
  } catch (err) {
    await remove()
    throw err
  }
}

async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

interface Service { url: string, child: ChildProcess, startedAt: number, stop: () => Promise<void> }

/**
 * `node <root>/dist/server.js` as a deployment starts it (any commit has it), on a free port;
 * resolves once GET /health answers 200.
 */
async function startService (root: string, label: string, env: Record<string, string>): Promise<Service> {
  const port = await freePort()
  const startedAt = performance.now()
  const child = spawn(process.execPath, [...profileArgs(label), path.join(root, 'dist', 'server.js')], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), ADMIN_PASSWORD, ...env },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    await once(child, 'exit')
  }
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + START_DEADLINE_MS
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${root}: the service exited with ${child.exitCode}`)
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) }).then((r) => r.ok, () => false)
    if (ok) return { url, child, startedAt, stop }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`${root}: the service did not answer /health within ${START_DEADLINE_MS} ms`)
    }
    await sleep(100)
  }
}

async function call (url: string, method: string, auth: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000)
  })
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`)
  return await response.json()
}

/** What one build needs for each scenario: made once, after the build has started. */
interface Fixture { token: string | undefined, groupId: string }

/** A session token; undefined for a build older than POST /login (its Bearer scenario is skipped). */
async function sessionToken (service: Service): Promise<string | undefined> {
  const response = await fetch(`${service.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ user: { username: 'admin', password: ADMIN_PASSWORD } }),
    signal: AbortSignal.timeout(30_000)
  })
  if (response.status === 404) return undefined
  if (!response.ok) throw new Error(`POST ${service.url}/login: ${response.status} ${await response.text()}`)
  return await response.json() as string
}

async function fixture (service: Service, nsoUrl: string): Promise<Fixture> {
  const token = await sessionToken(service)
  await call(`${service.url}/users`, 'POST', adminAuth, designer)
  const created = await call(`${service.url}/studio/component-groups`, 'POST', designerAuth, { componentGroup: group }) as { created: { _id: string } }
  await call(`${service.url}/orchestrator_manager/adapters`, 'POST', adminAuth, { id: 'bench', baseUrl: nsoUrl, username: 'admin', password: 'admin' })
  return { token, groupId: created.created._id }
}

// Each scenario's target, or undefined when a build lacks what it needs.
const scenarios: Array<[string, (url: string, f: Fixture) => Target | undefined]> = [
  ['ismaintenance-basic', (url) => ({ url: `${url}/configuration_manager/ismaintenance`, headers: { authorization: adminAuth } })],
  ['ismaintenance-bearer', (url, f) => f.token === undefined ? undefined : { url: `${url}/configuration_manager/ismaintenance`, headers: { authorization: `Bearer ${f.token}` } }],
  ['orchestrator-restquery', (url) => ({
    url: `${url}/orchestrator_manager/restQuery/bench`,
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ params: { path: NSO_DOCUMENT, accept: 'application/yang-data+json' } })
  })],
  ['studio-get', (url, f) => ({ url: `${url}/studio/component-groups/${f.groupId}`, headers: { authorization: designerAuth } })],
  ['studio-put', (url, f) => ({
    url: `${url}/studio/component-groups/${f.groupId}`,
    method: 'PUT',
    headers: { authorization: designerAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ update: group })
  })]
]

/**
 * Both builds run at once, each on a schema of its own on the PostgreSQL server when one answers
 * (else each on its own embedded database), against one NSO stand-in; `filters` keeps the
 * scenarios whose name contains one of them.
 */
export async function againstCommit (commit: string, filters: readonly string[] = []): Promise<void> {
  const build = await buildCommit(commit)
  const cleanup: Array<() => Promise<void>> = [build.remove]
  try {
    const nso = await startServer('nso')
    cleanup.unshift(nso.stop)
    const start = async (root: string, label: string): Promise<Service> => {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-against-data-'))
      cleanup.push(async () => { await rm(dataDir, { recursive: true, force: true }) })
      const database = await serverSchema('against')
      if (database !== undefined) cleanup.push(database.drop)
      const service = await startService(root, label, { DATA_DIR: dataDir, DATABASE_URL: database?.url ?? '', ORCHESTRATOR_POOL_CONNECTIONS: String(ROUNDS.connections) })
      cleanup.unshift(service.stop)
      return service
    }
    const ours = await start(ROOT, 'service-this-build')
    const theirs = await start(build.dir, `service-${build.commit.slice(0, 12)}`)
    const [ourFixture, theirFixture] = [await fixture(ours, nso.url), await fixture(theirs, nso.url)]
    for (const [name, target] of scenarios) {
      if (filters.length > 0 && !filters.some((f) => name.includes(f))) continue
      const [our, their] = [target(ours.url, ourFixture), target(theirs.url, theirFixture)]
      if (our === undefined || their === undefined) {
        report({ scenario: `${name}-vs-commit`, against: build.commit.slice(0, 12), skipped: 'a build lacks what the scenario needs (POST /login)' })
        continue
      }
      // With BENCH_CPU_PROF, where in each profile this scenario ran (ms from the process's start):
      // profile-summary's skipMs and untilMs.
      const since = (service: Service): number => Math.round(performance.now() - service.startedAt)
      const from = [since(ours), since(theirs)]
      const result = await compare({ ...our, pid: ours.child.pid }, { ...their, pid: theirs.child.pid }, ROUNDS)
      const profiled = profileArgs('').length === 0 ? {} : { profileWindowMs: { service: [from[0], since(ours)], baseline: [from[1], since(theirs)] } }
      report({ scenario: `${name}-vs-commit`, against: build.commit.slice(0, 12), load: os.loadavg()[0], ...result, ...profiled })
    }
  } finally {
    for (const step of cleanup) await step()
  }
}
