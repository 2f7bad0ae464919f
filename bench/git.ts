// Git scenarios: initializing a project through the service with a cold cache (a first fetch of a
// large repository) and with a warm one, each against the git CLI doing the same work from nothing
// (clone --depth 1, write, commit, push), in one run against one local git http-backend.
// Long because the scenarios share the repositories and the server they make.
import git from 'isomorphic-git'
import fs from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import os from 'node:os'
import path from 'node:path'
import { indexPack } from '../lib/git/protocol/pack-index.js'
import { gitCli, startGitServer, type GitServer } from '../test/fixtures/git-server.js'
import { median, report, startServer } from './measure.js'

const ROUNDS = 7
const ADMIN_PASSWORD = 'bench-admin-password'
const GIT_USER = 'bench'
const GIT_TOKEN = 'bench-token'
const auth = 'Basic ' + Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')
const gitAuth = `http.extraHeader=Authorization: Basic ${Buffer.from(`${GIT_USER}:${GIT_TOKEN}`).toString('base64')}`

const round = (ms: number): number => Math.round(ms * 10) / 10

async function timed (fn: () => Promise<void>): Promise<number> {
  const started = performance.now()
  await fn()
  return performance.now() - started
}

const projectContent = (name: string): Record<string, unknown> => ({ name, devices: ['r1', 'r2'], site: { region: 'east' } })

async function serviceInitialize (baseUrl: string, repo: string, file: string): Promise<void> {
  const url = `${baseUrl}/git/Bench/repos/${encodeURIComponent(repo)}/branches/main/projects/${encodeURIComponent(file)}`
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify({ project: projectContent(file) })
  })
  const body = await response.text()
  if (response.status !== 200) throw new Error(`service answered ${response.status}: ${body}`)
}

async function cliInitialize (git: GitServer, repo: string, file: string): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'bench-git-cli-'))
  try {
    await gitCli(['-c', gitAuth, 'clone', '-q', '--depth', '1', '--branch', 'main', git.repoUrl(repo), work])
    await mkdir(path.dirname(path.join(work, file)), { recursive: true })
    await writeFile(path.join(work, file), `${JSON.stringify(projectContent(file), null, 2)}\n`)
    await gitCli(['add', '--', file], { cwd: work })
    await gitCli(['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-m', `Initialize project ${file}`], { cwd: work })
    await gitCli(['-c', gitAuth, 'push', '-q', 'origin', 'HEAD:refs/heads/main'], { cwd: work })
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/** The service's configuration for a bench against `git` (a Bench provider with credentials). */
function serviceEnv (git: GitServer, dataDir: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    ADMIN_PASSWORD,
    // Long enough that no measured request pays the password hash.
    AUTH_CACHE_TTL_MS: '3600000',
    GIT_PROVIDERS: JSON.stringify({ Bench: { url: git.url, username: GIT_USER, token: GIT_TOKEN } })
  }
}

/**
 * While `work` runs, asks the service's lightest route for an answer every 20 ms, one at a time;
 * the slowest answer says how long the service's event loop was held at most.
 */
async function slowestAnswerDuring (baseUrl: string, work: () => Promise<void>): Promise<{ slowestMs: number, answers: number }> {
  let done = false
  let slowestMs = 0
  let answers = 0
  const probe = (async () => {
    while (!done) {
      const started = performance.now()
      const response = await fetch(`${baseUrl}/configuration_manager/ismaintenance`, { headers: { authorization: auth } })
      await response.arrayBuffer()
      slowestMs = Math.max(slowestMs, performance.now() - started)
      answers++
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  try {
    await work()
  } finally {
    done = true
    await probe
  }
  return { slowestMs, answers }
}

/**
 * Cold: the first initialization in a 50,000-file repository (the cache made, one depth-1 fetch,
 * the commit, the push) against `git clone --depth 1` + commit + push. One measurement of each:
 * a clone of this size takes seconds, and the ratio is what is read.
 */
export async function gitInitCold (): Promise<void> {
  const files = 50_000
  const git = await startGitServer({ username: GIT_USER, password: GIT_TOKEN })
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-git-'))
  const service = await startServer('service', serviceEnv(git, dataDir))
  try {
    const repo = `bench/cold-${files / 1000}k`
    const made = await timed(async () => { await git.makeLargeRepo(repo, { files, commits: 20 }) })
    // Unmeasured: the service's first request (password hash, code paths) on a small repository.
    await git.makeLargeRepo('bench/warm-up', { files: 10, commits: 1 })
    await serviceInitialize(service.url, 'bench/warm-up', 'projects/warm-up.json')

    let serviceMs = 0
    const held = await slowestAnswerDuring(service.url, async () => {
      serviceMs = await timed(async () => { await serviceInitialize(service.url, repo, 'projects/cold-service.json') })
    })
    const cliMs = await timed(async () => { await cliInitialize(git, repo, 'projects/cold-cli.json') })
    report({
      scenario: 'git-init-cold-vs-cli-50k',
      target: 'ratio <= 4',
      files,
      repoMadeMs: round(made),
      serviceMs: round(serviceMs),
      cliMs: round(cliMs),
      ratio: Number((serviceMs / cliMs).toFixed(3)),
      // The event loop while the pack was fetched and indexed: the slowest answer of the lightest route.
      slowestOtherAnswerMs: round(held.slowestMs),
      otherAnswers: held.answers
    })
  } finally {
    await service.stop()
    await git.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

export async function gitInitWarm (): Promise<void> {
  const git = await startGitServer({ username: GIT_USER, password: GIT_TOKEN })
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-git-'))
  const service = await startServer('service', serviceEnv(git, dataDir))
  try {
    const serviceMedians: number[] = []
    for (const files of [1000, 10_000]) {
      const commits = 200
      // Twins with the same content: the CLI's pushes must not move the branch under the service's
      // cache, or every service round would measure a fetch instead of the warm path.
      const repo = `bench/files-${files}`
      const twin = `bench/files-${files}-cli`
      await git.makeLargeRepo(repo, { files, commits })
      await git.makeLargeRepo(twin, { files, commits })
      const coldMs = await timed(async () => { await serviceInitialize(service.url, repo, 'projects/first.json') })
      await serviceInitialize(service.url, repo, 'projects/second.json') // not counted: first run of the warm code path

      const serviceMs: number[] = []
      const cliMs: number[] = []
      for (let i = 0; i < ROUNDS; i++) {
        serviceMs.push(await timed(async () => { await serviceInitialize(service.url, repo, `projects/service-${i}.json`) }))
        cliMs.push(await timed(async () => { await cliInitialize(git, twin, `projects/cli-${i}.json`) }))
      }
      const serviceMedian = median(serviceMs)
      const cliMedian = median(cliMs)
      serviceMedians.push(serviceMedian)
      report({
        scenario: `git-init-warm-vs-cli-${files / 1000}k`,
        target: 'ratio <= 0.5',
        files,
        commits,
        rounds: ROUNDS,
        coldMs: round(coldMs),
        serviceMs: round(serviceMedian),
        cliMs: round(cliMedian),
        serviceSamplesMs: serviceMs.map(round),
        ratio: Number((serviceMedian / cliMedian).toFixed(3))
      })
    }
    const [small = 0, large = 0] = serviceMedians
    report({
      scenario: 'git-init-warm-10k-vs-1k',
      target: 'ratio <= 2',
      serviceMs1k: round(small),
      serviceMs10k: round(large),
      ratio: Number((large / small).toFixed(3))
    })
  } finally {
    await service.stop()
    await git.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

const WARM_ROUNDS = 7
/** A file every generated repository has (see makeLargeRepo): the project read and updated. */
const EXISTING_PROJECT = 'dir-000/file-00001.json'

async function serviceCall (baseUrl: string, method: 'GET' | 'PUT', repo: string, file: string, project?: Record<string, unknown>): Promise<void> {
  const url = `${baseUrl}/git/Bench/repos/${encodeURIComponent(repo)}/branches/main/projects/${encodeURIComponent(file)}`
  const response = await fetch(url, {
    method,
    headers: { authorization: auth, ...(project === undefined ? {} : { 'content-type': 'application/json' }) },
    body: project === undefined ? undefined : JSON.stringify({ project })
  })
  const body = await response.text()
  if (response.status !== 200) throw new Error(`service answered ${response.status}: ${body}`)
}

/** The median time of each step over `rounds`, the steps' order rotated from one round to the next. */
async function rotatedRounds (steps: Record<string, (i: number) => Promise<void>>, rounds: number): Promise<Record<string, { ms: number, samplesMs: number[] }>> {
  const names = Object.keys(steps)
  const samples: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]))
  for (let i = 0; i < rounds; i++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length] as string
      const step = steps[name] as (i: number) => Promise<void>
      samples[name]?.push(await timed(async () => { await step(i) }))
    }
  }
  return Object.fromEntries(names.map((name) => [name, { ms: median(samples[name] ?? []), samplesMs: (samples[name] ?? []).map(round) }]))
}

/**
 * Warm: reading and updating a project in repositories of 1,000 and 10,000 files whose cache is
 * current, against the git CLI in a clone kept between rounds (retrieve: fetch + show; update:
 * fetch, write, commit, push). The CLI works on a twin repository, so its pushes never move the
 * branch under the service's cache. The four steps of a round (service and CLI, on each size)
 * run in an order rotated from round to round, so a machine that speeds up or slows down during
 * the run favours no side and no size.
 */
export async function gitUpdateRetrieveWarm (): Promise<void> {
  const git = await startGitServer({ username: GIT_USER, password: GIT_TOKEN })
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-git-'))
  const clones = await mkdtemp(path.join(os.tmpdir(), 'bench-git-clones-'))
  const service = await startServer('service', serviceEnv(git, dataDir))
  try {
    const sizes = [1000, 10_000]
    const cli: Record<number, (...args: string[]) => Promise<string>> = {}
    for (const files of sizes) {
      await git.makeLargeRepo(`bench/warm-${files}`, { files, commits: 20 })
      await git.makeLargeRepo(`bench/warm-${files}-cli`, { files, commits: 20 })
      const work = path.join(clones, String(files))
      await gitCli(['-c', gitAuth, 'clone', '-q', '--branch', 'main', git.repoUrl(`bench/warm-${files}-cli`), work])
      cli[files] = async (...args) => await gitCli(['-c', gitAuth, '-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], { cwd: work })
      // Unmeasured: the service's cache made and its code paths run once.
      await serviceCall(service.url, 'GET', `bench/warm-${files}`, EXISTING_PROJECT)
      await serviceCall(service.url, 'PUT', `bench/warm-${files}`, EXISTING_PROJECT, projectContent('warm-up'))
    }
    const operations = {
      retrieve: {
        service: async (files: number) => { await serviceCall(service.url, 'GET', `bench/warm-${files}`, EXISTING_PROJECT) },
        cli: async (files: number) => {
          const run = cli[files] as (...args: string[]) => Promise<string>
          await run('fetch', '-q', 'origin', 'main')
          await run('show', `origin/main:${EXISTING_PROJECT}`)
        }
      },
      update: {
        service: async (files: number, i: number) => {
          await serviceCall(service.url, 'PUT', `bench/warm-${files}`, EXISTING_PROJECT, projectContent(`service-${i}`))
        },
        cli: async (files: number, i: number) => {
          const run = cli[files] as (...args: string[]) => Promise<string>
          await run('fetch', '-q', 'origin', 'main')
          await run('merge', '-q', '--ff-only', 'origin/main')
          await writeFile(path.join(clones, String(files), EXISTING_PROJECT), `${JSON.stringify(projectContent(`cli-${i}`), null, 2)}\n`)
          await run('commit', '-q', '-a', '-m', `Update project ${EXISTING_PROJECT}`)
          await run('push', '-q', 'origin', 'HEAD:refs/heads/main')
        }
      }
    }
    for (const [operation, { service: onService, cli: onCli }] of Object.entries(operations)) {
      const steps: Record<string, (i: number) => Promise<void>> = {}
      for (const files of sizes) {
        steps[`service-${files}`] = async (i) => { await onService(files, i) }
        steps[`cli-${files}`] = async (i) => { await onCli(files, i) }
      }
      const figures = await rotatedRounds(steps, WARM_ROUNDS)
      const at = (name: string): { ms: number, samplesMs: number[] } => figures[name] ?? { ms: 0, samplesMs: [] }
      for (const files of sizes) {
        const ours = at(`service-${files}`)
        const theirs = at(`cli-${files}`)
        report({
          scenario: `git-${operation}-warm-vs-cli-${files / 1000}k`,
          target: 'ratio <= 0.5',
          files,
          rounds: WARM_ROUNDS,
          serviceMs: round(ours.ms),
          cliMs: round(theirs.ms),
          serviceSamplesMs: ours.samplesMs,
          cliSamplesMs: theirs.samplesMs,
          ratio: Number((ours.ms / theirs.ms).toFixed(3))
        })
      }
      const small = at('service-1000').ms
      const large = at('service-10000').ms
      report({
        scenario: `git-${operation}-warm-10k-vs-1k`,
        target: 'ratio <= 1.5',
        serviceMs1k: round(small),
        serviceMs10k: round(large),
        ratio: Number((large / small).toFixed(3))
      })
    }
  } finally {
    await service.stop()
    await git.close()
    await rm(dataDir, { recursive: true, force: true })
    await rm(clones, { recursive: true, force: true })
  }
}

/** How long `fn` takes, and the longest it held this process's event loop. */
async function timedWithLoop (fn: () => Promise<void>): Promise<{ ms: number, loopHeldMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  const ms = await timed(fn)
  delay.disable()
  return { ms, loopHeldMs: delay.max / 1e6 }
}

/**
 * The pack index alone, on the pack a depth-1 clone of a 10,000-file repository gets: ours
 * (lib/git/protocol/pack-index.ts) against isomorphic-git's indexPack (GitPackIndex.fromPack + toBuffer,
 * what its fetch runs), one run each in this process, with the longest hold of the event loop.
 */
export async function gitPackIndex (): Promise<void> {
  const files = 10_000
  const server = await startGitServer()
  const work = await mkdtemp(path.join(os.tmpdir(), 'bench-pack-index-'))
  try {
    await server.makeLargeRepo('bench/pack', { files, commits: 20 })
    const bare = path.join(work, 'clone.git')
    await gitCli(['clone', '-q', '--bare', '--depth', '1', `file://${server.repoDir('bench/pack')}`, bare])
    const packDir = path.join(bare, 'objects', 'pack')
    const name = (await readdir(packDir)).find((f) => f.endsWith('.pack')) as string
    const pack = await readFile(path.join(packDir, name))
    await rm(path.join(packDir, name.replace(/\.pack$/, '.idx')))

    let ourIdx: Buffer = Buffer.alloc(0)
    const ours = await timedWithLoop(async () => { ourIdx = (await indexPack(pack)).idx })
    const theirs = await timedWithLoop(async () => {
      await git.indexPack({ fs, dir: bare, gitdir: bare, filepath: `objects/pack/${name}`, cache: {} })
    })
    const theirIdx = await readFile(path.join(packDir, name.replace(/\.pack$/, '.idx')))
    report({
      scenario: 'git-pack-index-vs-isomorphic-git-10k',
      files,
      objects: pack.readUInt32BE(8),
      packBytes: pack.length,
      ms: round(ours.ms),
      isomorphicGitMs: round(theirs.ms),
      ratio: Number((ours.ms / theirs.ms).toFixed(3)),
      loopHeldMs: round(ours.loopHeldMs),
      isomorphicGitLoopHeldMs: round(theirs.loopHeldMs),
      sameIndex: ourIdx.equals(theirIdx)
    })
  } finally {
    await server.close()
    await rm(work, { recursive: true, force: true })
  }
}
