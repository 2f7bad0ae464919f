// A small repository holding a huge file that compresses well: reading it through the API is
// refused from the object's header, before it is inflated, with memory and the event loop bounded
// meanwhile (the pack is indexed a piece at a time), and the rest of the repository stays readable.
import t from 'tap'
import { mkdtemp, open, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gitCli, startGitServer } from '../../fixtures/git-server.js'
import { buildTestApp, createUser } from '../../helper.js'

const MiB = 1024 * 1024
// Large beside what a busy collector may leave uncollected of the pieces inflated (37-51 MiB seen
// at a load of 9 against a file of 64 MiB): the bound is half the file.
const BIG = 192 * MiB

function projectUrl (repo: string, branch: string, projectPath: string): string {
  const e = encodeURIComponent
  return `/git/GitHub/repos/${e(repo)}/branches/${e(branch)}/projects/${e(projectPath)}`
}

t.test(`a ${BIG / MiB} MiB file in a small repository: refused before it is inflated, memory and event loop bounded`, async (t) => {
  const server = await startGitServer()
  t.teardown(async () => { await server.close() })
  const repo = 'netops/huge-file'
  await server.createRepo(repo, { files: { 'site.json': '{"site": "a"}\n' } })
  const app = await buildTestApp(t, { env: { GIT_PROVIDERS: JSON.stringify({ GitHub: { url: server.url } }) } })
  // A user with no role may read projects.
  const reader = await createUser(app, { username: 'reader' })
  const read = async (projectPath: string) => await app.inject({ method: 'GET', url: projectUrl(repo, 'main', projectPath), headers: { authorization: reader } })
  // The repository as it was, read once (its cache made), before the huge file is pushed to it.
  t.equal((await read('site.json')).statusCode, 200)
  const work = await mkdtemp(path.join(os.tmpdir(), 'large-file-'))
  t.teardown(async () => { await rm(work, { recursive: true, force: true }) })
  await gitCli(['clone', '-q', server.repoDir(repo), work])
  const line = Buffer.from('{"device": "r1", "interface": "GigabitEthernet0/0/0", "state": "up"}\n')
  const piece = Buffer.alloc(MiB)
  for (let o = 0; o < piece.length; o += line.length) line.copy(piece, o)
  const file = await open(path.join(work, 'big.json'), 'w')
  for (let written = 0; written < BIG; written += piece.length) await file.write(piece)
  await file.close()
  await gitCli(['add', 'big.json'], { cwd: work })
  await gitCli(['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'A huge file'], { cwd: work })
  await gitCli(['push', '-q', 'origin', 'HEAD:main'], { cwd: work })

  // Memory held by JavaScript and by buffers (the inflated file would be counted there), sampled as often as the loop turns.
  const usage = (): number => { const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers }
  global.gc?.()
  const before = usage()
  const rssBefore = process.memoryUsage().rss
  let peak = before
  let rssPeak = rssBefore
  const sampler = setInterval(() => {
    peak = Math.max(peak, usage())
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
  }, 5)
  // The longest stretch the event loop is held, as CPU time of this thread between two turns of a
  // timer: wall time would also count the waits of a busy machine, which hold nothing.
  let longestHold = 0
  let cpuAt = process.threadCpuUsage()
  let turning = true
  const turns = (async () => {
    while (turning) {
      // A sampler, not a wait for a condition: each turn of this timer measures the stretch before it.
      await new Promise((resolve) => setTimeout(resolve, 2))
      const now = process.threadCpuUsage()
      longestHold = Math.max(longestHold, (now.user + now.system - cpuAt.user - cpuAt.system) / 1000)
      cpuAt = now
    }
  })()
  // Other requests go on being answered while the file's pack is fetched and indexed.
  let reading = true
  let answered = 0
  const others = (async () => {
    while (reading) {
      const health = await app.inject({ method: 'GET', url: '/health' })
      if (health.statusCode === 200) answered++
      // Pacing, not a wait for a condition: the probes' own garbage must not count as the read's memory.
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  const big = await read('big.json')
  reading = false
  await others
  turning = false
  await turns
  clearInterval(sampler)

  // Before: the file was inflated whole twice (indexing the pack, then reading it), each at once on the event loop.
  const grew = peak - before
  t.ok(grew < BIG / 2, `memory grew by ${Math.round(grew / MiB)} MiB (RSS by ${Math.round((rssPeak - rssBefore) / MiB)} MiB), less than half the file`)
  // Before: the file was inflated in one call each time, which held the loop for seconds.
  t.ok(longestHold < 250, `the event loop was held ${Math.round(longestHold)} ms (CPU time) at most`)
  t.ok(answered > 0, `${answered} other requests answered meanwhile`)
  t.equal(big.statusCode, 502)
  t.equal(big.headers['content-type'], 'application/json; charset=utf-8')
  if (big.statusCode === 502) {
    t.equal(big.json().code, 'GIT_PROJECT_TOO_LARGE')
    t.match(big.json().message, `Project big.json on branch main of repository ${repo} is a file of ${BIG} bytes; the service reads project files of up to ${8 * MiB} bytes (GIT_PROJECT_MAX_BYTES)`)
  }

  // The rest of the repository reads as before, and the file is refused again from the cache.
  const small = await read('site.json')
  t.equal(small.statusCode, 200)
  t.equal(small.body, '{"site": "a"}\n')
  const again = await read('big.json')
  t.equal(again.statusCode, 502, 'refused again from the cache')
})

t.test('GIT_PROJECT_MAX_BYTES sets the limit: a file just within it is read whole, one byte more refused', async (t) => {
  const server = await startGitServer()
  t.teardown(async () => { await server.close() })
  const repo = 'netops/limits'
  const within = `${'x'.repeat(4095)}\n`
  await server.createRepo(repo, { files: { 'within.txt': within, 'past.txt': `${within}y` } })
  const app = await buildTestApp(t, { env: { GIT_PROVIDERS: JSON.stringify({ GitHub: { url: server.url } }), GIT_PROJECT_MAX_BYTES: '4096' } })
  const reader = await createUser(app, { username: 'reader' })
  const read = async (projectPath: string) => await app.inject({ method: 'GET', url: projectUrl(repo, 'main', projectPath), headers: { authorization: reader } })
  const ok = await read('within.txt')
  t.equal(ok.statusCode, 200)
  t.equal(ok.body, within)
  const past = await read('past.txt')
  t.equal(past.statusCode, 502)
  if (past.statusCode === 502) {
    t.equal(past.json().code, 'GIT_PROJECT_TOO_LARGE')
    t.match(past.json().message, 'is a file of 4097 bytes; the service reads project files of up to 4096 bytes')
  }
})
